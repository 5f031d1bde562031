"""TRL `environment_factory` classes generated from the tool schemas `toolgym serve` declares.

Each JSON-Schema tool becomes a typed method with a Google-style docstring, so that
`transformers.utils.get_json_schema` (what TRL uses to render tools into the prompt) yields the same
schema the TypeScript environment declares. What a Python signature cannot express is dropped:
`additionalProperties: false` and numeric bounds (`minimum`, `maximum`); keep such limits in the
parameter description too, which TRL does render.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import logging
import re
from typing import Any, Literal

from .client import ServerClient, ServerPool, ToolgymConnectionError, ToolgymServerError, ToolgymSessionLost

_log = logging.getLogger("toolgym_trl")
# Whether the first lost episode was logged: after a restart every episode in flight is lost at once, and one line says it.
_lost_logged = False

_RESERVED = {"reset", "get_reward"}
_SIMPLE_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


class SchemaNotExpressible(ValueError):
    """A tool schema uses a JSON-Schema feature a Python signature cannot express."""


def _literal(values: list) -> str:
    return "Literal[" + ", ".join(repr(value) for value in values) + "]"


def type_hint(schema: dict, where: str) -> str:
    """The Python type hint (as source text) whose transformers JSON schema is `schema` (minus descriptions)."""
    kind = schema.get("type")
    if "enum" in schema:
        values = schema["enum"]
        if not values or not all(isinstance(value, (str, int, float, bool)) for value in values):
            raise SchemaNotExpressible(f"{where}: enum values must be JSON scalars")
        return _literal(values)
    if isinstance(kind, list):
        if not kind or not all(isinstance(name, str) and name in _SIMPLE_TYPES for name in kind):
            raise SchemaNotExpressible(f"{where}: type list {kind!r} must hold only string/integer/number/boolean")
        return " | ".join(_SIMPLE_TYPES[name] for name in kind)
    if kind in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[kind]
    if kind == "array":
        items = schema.get("items")
        return "list" if items is None else f"list[{type_hint(items, where + '[]')}]"
    if kind == "object":
        if schema.get("properties"):
            raise SchemaNotExpressible(f"{where}: nested objects with properties collapse to dict")
        extra = schema.get("additionalProperties")
        return f"dict[str, {type_hint(extra, where + '{}')}]" if isinstance(extra, dict) else "dict"
    if kind is None and not schema:
        return "Any"
    raise SchemaNotExpressible(f"{where}: JSON type {kind!r} has no Python equivalent here")


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def method_source(tool: dict) -> tuple[str, str]:
    """Python source of `def <name>(self, *, ...) -> str` with a Google-style docstring; returns (name, source)."""
    function = tool["function"]
    name = function["name"]
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in _RESERVED:
        raise SchemaNotExpressible(f"tool name {name!r} cannot be a method name for TRL")
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    arguments, documented = [], []
    for parameter, schema in properties.items():
        if not parameter.isidentifier() or keyword.iskeyword(parameter) or parameter == "self":
            raise SchemaNotExpressible(f"{name}: parameter {parameter!r} is not a Python identifier")
        hint = type_hint(schema, f"{name}.{parameter}")
        arguments.append(f"{parameter}: {hint}" if parameter in required else f"{parameter}: {hint} = None")
        description = _one_line(schema.get("description") or parameter)
        documented.append(f"{parameter}: {description}")
    signature = ", ".join(["self", "*", *arguments]) if arguments else "self"
    docstring = (function.get("description") or name).strip()
    if documented:
        docstring += "\n\nArgs:\n" + "\n".join(f"    {line}" for line in documented)
    pairs = "".join(f"({parameter!r}, {parameter}), " for parameter in properties)
    source = (
        f"def {name}({signature}):\n"
        f"    {docstring!r}\n"
        f"    return self._call({name!r}, {{k: v for k, v in ({pairs}) if v is not None}})\n"
    )
    return name, source


def bind_tools(cls: type, tools: list[dict]) -> None:
    """Adds one generated method per tool schema to `cls`; each keeps its schema and position for
    `render_environment_schemas`."""
    for position, tool in enumerate(tools):
        name, source = method_source(tool)
        namespace: dict[str, Any] = {"Literal": Literal, "Any": Any}
        exec(compile(source, f"<toolgym tool {name}>", "exec"), namespace)  # noqa: S102 - generated from a schema
        function = namespace[name]
        function.toolgym_schema = tool
        function.toolgym_position = position
        setattr(cls, name, function)


def environment_schemas(tools):
    """`tools` as the environment declares them when every entry is a method `bind_tools` made (else unchanged).

    TRL renders an environment's tools from its methods: in alphabetical order (inspect.getmembers), with schemas
    rebuilt from signatures and docstrings, which drop JSON-schema bounds such as `minimum`. toolgym's episodes,
    SFT rows and evaluations render the environment's own schemas in its own order, so without this a GRPO prompt
    differs from the prompts the model is trained and evaluated on."""
    if not tools or not all(hasattr(getattr(tool, "__func__", tool), "toolgym_schema") for tool in tools):
        return tools
    functions = sorted((getattr(tool, "__func__", tool) for tool in tools), key=lambda function: function.toolgym_position)
    return [function.toolgym_schema for function in functions]


def render_environment_schemas(processing_class) -> None:
    """Makes `processing_class.apply_chat_template` render toolgym environment tools with `environment_schemas`
    (instance-level: the class and other tokenizers are untouched)."""
    original = processing_class.apply_chat_template

    def apply_chat_template(*args, tools=None, **kwargs):
        return original(*args, tools=environment_schemas(tools), **kwargs)

    processing_class.apply_chat_template = apply_chat_template


def _class_name(env_id: str) -> str:
    return "Toolgym" + "".join(part.capitalize() for part in re.split(r"[^0-9a-zA-Z]+", env_id) if part)


class StaleDatasetError(ValueError):
    """A dataset row does not describe the task the server builds from it (another task, another version)."""


def prompt_hash(messages: list[tuple[str, str]]) -> str:
    """sha256 of `[[role, content], ...]` as compact JSON; `toolgym dataset` writes the same hash."""
    canonical = json.dumps([[role, content] for role, content in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _prompt_pairs(prompt) -> list[tuple[str, str]]:
    """A row's `prompt` (chat messages, a plain string, or nothing) as (role, content) pairs."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [("user", prompt)]
    return [(message.get("role", "user"), message.get("content") or "") for message in prompt]


def _first_text(messages: list[tuple[str, str]]) -> str:
    text = next((content for _, content in messages if content.strip()), "")
    return text if len(text) <= 80 else text[:77] + "..."


class ToolgymEnvironmentBase:
    """Shared behaviour of the generated classes. Helpers start with `_` so TRL does not expose them as tools."""

    _base_url: str = ""
    _pool: ServerPool | None = None
    _token: str | None = None
    _env_id: str = ""
    _env_version: str = ""
    _timeout: float = 60.0
    _max_turns: int | None = None
    _watch: dict | None = None  # the environment's reward-hacking watch (`GET /envs`): outcome component and signatures
    _config: dict | None = None  # config keys set over every row's config (an exploit arm's reward variant)

    def __init__(self):
        self._clients: dict[str, ServerClient] = {}
        self._server: str | None = None  # the server holding the current session
        self._sequence = 0  # the session's last tool call number; the server runs each number once
        self._lost: str | None = None  # why the current session is gone (its server stopped answering)
        self._session_id: str | None = None
        self._breakdown: dict | None = None
        self.prompt_messages: list[dict] = []
        self.reward_breakdown: dict | None = None
        self.done = False
        self.calls = 0

    def reset(self, **row) -> str | None:
        """Starts a new episode from a dataset row (`env`, `split`, `seed`, `index`, `config`, and optionally
        `max_turns`, else the factory's `max_turns`, else the environment's own limit).

        TRL passes the row's `prompt` here and appends what this returns to the prompt's last message. So:
        the task text when the row has no prompt or an empty one (every content blank); None when the row's
        prompt is the task's prompt; `StaleDatasetError` when it is another prompt, or when the row's
        `env_version`/`prompt_hash` (written by `toolgym dataset`) do not match what the server starts.
        """
        self._close_session()
        env = row.get("env", self._env_id)
        if env != self._env_id:
            raise ValueError(f"this environment class serves {self._env_id!r} but the row asks for {env!r}; build one factory per environment")
        body = {"env": self._env_id}
        for key in ("split", "seed", "index", "config", "max_turns"):
            if row.get(key) is not None:
                body[key] = row[key]
        if self._config:
            # `toolgym dataset` writes the config as JSON text (one parquet column type for every environment)
            config = body.get("config") or {}
            body["config"] = {**(json.loads(config) if isinstance(config, str) else config), **self._config}
        if "max_turns" not in body and self._max_turns is not None:
            body["max_turns"] = self._max_turns
        self._check_version(row)
        created = self._create(body)
        self._session_id = created["session_id"]
        self.prompt_messages = created["messages"]
        self.reward_breakdown = None
        self._breakdown = None
        self.done = False
        self.calls = 0
        messages = [(message["role"], message.get("content") or "") for message in created["messages"]]
        task_text = "\n\n".join(content for role, content in messages if role != "assistant")
        where = f"{self._env_id} split={row.get('split')!r} seed={row.get('seed')!r} index={row.get('index')!r}"
        if row.get("prompt_hash") is not None and row["prompt_hash"] != prompt_hash(messages):
            self._close_session()
            raise StaleDatasetError(
                f"the dataset row ({where}) was written for another task than the one the server now builds from it "
                f"(prompt_hash differs); regenerate the dataset with `toolgym dataset {self._env_id}`"
            )
        prompt = _prompt_pairs(row.get("prompt"))
        if all(not content.strip() for _, content in prompt):
            return task_text  # no prompt in the row: TRL appends the task to the (empty) last message
        if prompt == messages or "\n\n".join(content for role, content in prompt if role != "assistant") == task_text:
            return None  # the row already carries this task's prompt
        self._close_session()
        raise StaleDatasetError(
            f"the dataset row's prompt is not the prompt of its task ({where}): it starts "
            f"{_first_text(prompt)!r} but the task starts {_first_text(messages)!r}; the dataset is stale or its "
            f"columns were mixed up; regenerate it with `toolgym dataset {self._env_id}`, or leave the prompt empty"
        )

    def _check_version(self, row: dict) -> None:
        version = row.get("env_version")
        if version is not None and self._env_version and version != self._env_version:
            raise StaleDatasetError(
                f"the dataset row was written by {self._env_id} version {version} but the server runs version "
                f"{self._env_version}; regenerate the dataset with `toolgym dataset {self._env_id}`"
            )

    def _client_for(self, url: str) -> ServerClient:
        if url not in self._clients:
            self._clients[url] = ServerClient(url, self._token, self._timeout)
        return self._clients[url]

    def _create(self, body: dict) -> dict:
        """`POST /sessions` on the server the task's address picks; a server that cannot be reached is skipped
        (and marked down for a while) and the session is created on another one."""
        pool = self._pool or ServerPool(self._base_url)
        address = json.dumps({key: body.get(key) for key in ("env", "split", "seed", "index", "config")}, sort_keys=True)
        failures = []
        for url in pool.order(address):
            try:
                created = self._client_for(url).request("POST", "/sessions", body)
            except ToolgymConnectionError as error:
                pool.mark_down(url)
                failures.append(str(error))
                continue
            pool.mark_up(url)
            self._server = url
            self._sequence = 0
            self._lost = None
            return created
        raise ToolgymConnectionError(f"no toolgym server could start a session: {'; '.join(failures)}")

    def get_reward(self) -> float | None:
        """The episode's total reward as computed by the TypeScript environment, or None when it cannot be
        (TRL then leaves the sample out of the loss): its server stopped, or restarted and lost the session
        (`ToolgymSessionLost`). The first such episode of the process is logged (logger `toolgym_trl`), once."""
        global _lost_logged
        if self._lost is None:
            try:
                breakdown = self._fetch_breakdown()
            except (ToolgymConnectionError, ToolgymSessionLost):
                pass  # `_request` recorded why in `_lost`
        if self._lost is not None:
            if not _lost_logged:
                _lost_logged = True
                _log.warning("toolgym: an episode gets no reward (None) because %s; later ones are not logged", self._lost)
            return None
        total = breakdown.get("total")
        return None if total is None else float(total)

    def _fetch_breakdown(self) -> dict:
        if self._session_id is None:
            raise RuntimeError("no episode: reset() was not called")
        if self._lost is not None:
            raise ToolgymConnectionError(f"the episode is lost: {self._lost}")
        if self._breakdown is None:
            self._breakdown = self._request("GET", f"/sessions/{self._session_id}/reward")
            self.reward_breakdown = self._breakdown
        return self._breakdown

    def _call(self, name: str, arguments: dict) -> str:
        if self._session_id is None:
            raise RuntimeError("no episode: reset() was not called")
        # Numbered calls: a call resent after a lost connection is answered from the server's record of it,
        # so no tool runs twice. A session cannot move to another server (its state lives in its server).
        self._sequence += 1
        body = {"name": name, "arguments": arguments, "seq": self._sequence}
        outcome = self._request("POST", f"/sessions/{self._session_id}/call", body)
        self._breakdown = None
        self.done = bool(outcome["done"])
        self.calls = int(outcome["calls"])
        return outcome["content"]

    def _request(self, method: str, path: str, body: object | None = None) -> object:
        """A request about the current session, to the server that holds it."""
        if self._lost is not None:
            raise ToolgymConnectionError(f"the episode is lost: {self._lost}")
        try:
            return self._client_for(self._server or self._base_url).request(method, path, body)
        except ToolgymServerError as error:
            if error.code != "SESSION_UNKNOWN":
                raise
            server = self._server or self._base_url
            lost = ToolgymSessionLost(str(self._session_id), server, str(error))
            self._lost = str(lost)
            raise lost from error
        except ToolgymConnectionError as error:
            if self._pool is not None and self._server is not None:
                self._pool.mark_down(self._server)
            self._lost = f"its toolgym server {self._server} stopped answering ({error}); the next reset starts a session on another server"
            raise ToolgymConnectionError(f"the episode is lost: {self._lost}", may_have_run=error.may_have_run) from error

    def _close_session(self) -> None:
        if self._session_id is not None and self._lost is None:
            try:
                self._client_for(self._server or self._base_url).request("DELETE", f"/sessions/{self._session_id}")
            except Exception:  # noqa: BLE001 - closing is best effort (the server reaps idle sessions anyway)
                pass
        self._session_id = None
        self._lost = None

    def __del__(self):
        try:
            self._close_session()
            for client in self._clients.values():
                client.close()
        except Exception:  # noqa: BLE001
            pass


def build_environment_class(
    entry: dict,
    base_url: str | list[str],
    token: str | None = None,
    timeout: float = 60.0,
    max_turns: int | None = None,
    config: dict | None = None,
) -> type:
    """The class for one environment entry of `GET /envs`; its instances share the servers in `base_url`. `config`
    keys are set over every row's config (the prompts do not change; what the server scores with may)."""
    pool = ServerPool(base_url)
    cls = type(
        _class_name(entry["id"]),
        (ToolgymEnvironmentBase,),
        {
            "_base_url": pool.urls[0],
            "_pool": pool,
            "_token": token,
            "_env_id": entry["id"],
            "_env_version": entry.get("version", ""),
            "_timeout": timeout,
            "_max_turns": max_turns,
            "_watch": entry.get("watch"),
            "_config": dict(config) if config else None,
            "__doc__": entry.get("description"),
        },
    )
    bind_tools(cls, entry["tools"])
    return cls


def log_reward_components(environments=None, log_metric=None, **kwargs) -> list:
    """A TRL reward function that adds nothing to the reward but logs each component's batch mean as
    `toolgym/<component>`; pass it in `reward_funcs` next to the environment's own `get_reward`."""
    if not environments:
        return [None] * len(kwargs.get("prompts", []))
    sums: dict[str, list[float]] = {}
    for environment in environments:
        breakdown = None
        if isinstance(environment, ToolgymEnvironmentBase) and environment._lost is None:
            try:
                breakdown = environment._fetch_breakdown()
            except (ToolgymConnectionError, ToolgymSessionLost):
                pass  # its server stopped: get_reward leaves the sample out, and so does this log
        for component, value in ((breakdown or {}).get("components") or {}).items():
            if value is not None:
                sums.setdefault(component, []).append(float(value))
    if log_metric is not None:
        for component, values in sums.items():
            log_metric(f"toolgym/{component}", sum(values) / len(values))
    return [None] * len(environments)


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
