"""A minimal FastAPI/uvicorn server doing the same in-memory step as `toolgym serve` on the mock env
(a session holds a key-value table; `lookup` returns {key, value}); the baseline for bench/server.ts.

    python python/bench/fastapi_server.py PORT

uvicorn picks uvloop and httptools when they are importable (`pip install uvloop httptools`, as in
`uvicorn[standard]`), else asyncio and h11; the first line on stdout says which, for the bench's table.
"""

import importlib.util
import json
import random
import sys
import uuid

import uvicorn
from fastapi import FastAPI, HTTPException, Request

app = FastAPI()
sessions: dict[str, dict] = {}


@app.post("/sessions", status_code=201)
async def create(request: Request):
    body = await request.json()
    rng = random.Random(f"{body.get('seed', 0)}/{body.get('index', 0)}")
    table = {f"k{i}": str(rng.randint(100, 999)) for i in range(5)}
    session_id = str(uuid.uuid4())
    sessions[session_id] = {"table": table, "calls": 0, "done": False}
    return {"session_id": session_id, "messages": [{"role": "user", "content": "What is the value of key 'k0'?"}]}


@app.post("/sessions/{session_id}/call")
async def call(session_id: str, request: Request):
    session = sessions.get(session_id)
    if session is None:
        raise HTTPException(404, "unknown session")
    body = await request.json()
    session["calls"] += 1
    key = (body.get("arguments") or {}).get("key")
    value = session["table"].get(key)
    if value is None:
        content = json.dumps({"ok": False, "error": f"no key '{key}'"})
        return {"content": content, "is_error": True, "done": False, "calls": session["calls"]}
    return {"content": json.dumps({"key": key, "value": value}), "is_error": False, "done": False, "calls": session["calls"]}


@app.delete("/sessions/{session_id}")
async def close(session_id: str):
    sessions.pop(session_id, None)
    return {"closed": True}


if __name__ == "__main__":
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    print(f"uvicorn {uvicorn.__version__} loop={loop} http={http}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
