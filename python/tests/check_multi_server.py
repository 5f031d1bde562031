"""Runs rollouts through toolgym_trl over two servers and kills one mid-run (called from
test/trl-adapter-failover.test.ts).

    python python/tests/check_multi_server.py URL_A PID_A URL_B

Eight threads each drive one environment instance, as TRL's rollout workers do: reset(row), lookup, finish,
get_reward, 48 episodes in all. After 12 episodes the process of server A is killed (SIGKILL). Server B is
reached through a proxy in this process that drops the connection after every 5th tool call has run on B
(each call at most once), before its answer reaches the client: the client resends that call with the same sequence number.
Before that, six GRPO-like groups (four environments reset with one row each) record the server each session
went to. Prints one JSON report: the groups' servers, and every tool call's server, session, sequence number and
the server's call count.
"""

import http.client
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import toolgym_trl  # noqa: E402

EPISODES = 48
KILL_AFTER = 12
THREADS = 8


def dropping_proxy(target: str):
    """An HTTP/1.1 proxy to `target` that loses the answer of every 5th tool call after the server ran it."""
    parts = urlsplit(target)
    state = {"calls": 0, "dropped": 0}
    dropped = set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            upstream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            headers = {name: value for name, value in self.headers.items() if name.lower() not in ("connection", "host")}
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            payload = response.read()
            upstream.close()
            if self.command == "POST" and self.path.endswith("/call"):
                call = (self.path, json.loads(body or b"{}").get("seq"))
                with lock:
                    state["calls"] += 1
                    # each call's answer is lost at most once, so the client's resend gets through
                    drop = state["calls"] % 5 == 0 and call not in dropped
                    if drop:
                        dropped.add(call)
                        state["dropped"] += 1
                if drop:
                    self.close_connection = True  # the call ran on the server; its answer is lost
                    return
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = _forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", state


def main() -> None:
    url_a, pid_a, url_b = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    proxy_b, proxy_state = dropping_proxy(url_b)
    names = {url_a: "A", proxy_b: "B"}
    Environment = toolgym_trl.environment_factory([url_a, proxy_b], env="mock")
    groups = []
    for index in range(6):
        members = [Environment() for _ in range(4)]
        for member in members:
            member.reset(env="mock", split="train", seed=12, index=index)
        groups.append([names[member._server] for member in members])
        for member in members:
            member._close_session()
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "killed_at": None}
    episodes, calls, failures = [], [], []

    def worker():
        env = Environment()
        while True:
            with lock:
                if state["next"] >= EPISODES:
                    return
                number = state["next"]
                state["next"] += 1
                killed = state["killed_at"] is not None
            row = {"env": "mock", "split": "train", "seed": 11, "index": number}
            env.reset(**row)
            server = names[env._server]
            key = env.prompt_messages[-1]["content"].split("'")[1]
            record = {"episode": number, "server": server, "created_after_kill": killed, "session": env._session_id}
            try:
                value = json.loads(env.lookup(key=key))["value"]
                with lock:
                    calls.append({"server": server, "session": env._session_id, "seq": 1, "calls": env.calls})
                json.loads(env.finish(answer=value))
                with lock:
                    calls.append({"server": server, "session": env._session_id, "seq": 2, "calls": env.calls})
            except toolgym_trl.ToolgymConnectionError as error:
                with lock:
                    failures.append({"episode": number, "server": server, "error": str(error)[:300]})
            record["reward"] = env.get_reward()
            with lock:
                episodes.append(record)
                state["done"] += 1
                if state["done"] == KILL_AFTER and state["killed_at"] is None:
                    os.kill(pid_a, signal.SIGKILL)
                    state["killed_at"] = state["done"]

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"groups": groups, "episodes": episodes, "calls": calls, "failures": failures, "proxy": proxy_state, "killed_at": state["killed_at"]}))


if __name__ == "__main__":
    main()
