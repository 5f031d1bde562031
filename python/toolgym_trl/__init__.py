"""toolgym_trl: train on toolgym environments with TRL's `GRPOTrainer(environment_factory=...)`.

    from toolgym_trl import environment_factory
    Env = environment_factory("http://127.0.0.1:8765", env="search_plan_act")
    trainer = GRPOTrainer(..., environment_factory=Env)

Several servers (one per node, say): `environment_factory(["http://node0:8765", "http://node1:8765"], env=...)`
spreads new sessions over them and skips a server that does not answer.

The adapter needs only the Python standard library; the server is `npx toolgym serve`.
"""

from __future__ import annotations

from .adapter import (
    SchemaNotExpressible,
    StaleDatasetError,
    ToolgymEnvironmentBase,
    build_environment_class,
    environment_schemas,
    render_environment_schemas,
    log_reward_components,
    method_source,
    prompt_hash,
    type_hint,
)
from .watch import RewardWatch, WatchThresholds, reward_watch
from .client import ServerClient, ServerPool, ToolgymConnectionError, ToolgymServerError, ToolgymSessionLost, split_urls

__all__ = [
    "environment_factory",
    "list_environments",
    "log_reward_components",
    "RewardWatch",
    "WatchThresholds",
    "reward_watch",
    "build_environment_class",
    "environment_schemas",
    "render_environment_schemas",
    "method_source",
    "type_hint",
    "ServerClient",
    "ServerPool",
    "SchemaNotExpressible",
    "StaleDatasetError",
    "prompt_hash",
    "ToolgymEnvironmentBase",
    "ToolgymConnectionError",
    "ToolgymServerError",
    "ToolgymSessionLost",
]


def list_environments(base_url: str = "http://127.0.0.1:8765", token: str | None = None) -> list[dict]:
    """`GET /envs`: every environment the server serves, with its tool schemas."""
    client = ServerClient(base_url, token)
    try:
        return client.request("GET", "/envs")["environments"]
    finally:
        client.close()


def environment_factory(
    base_url: str | list[str] = "http://127.0.0.1:8765",
    env: str | None = None,
    token: str | None = None,
    timeout: float = 60.0,
    max_turns: int | None = None,
    config: dict | None = None,
) -> type:
    """The class TRL instantiates with no arguments, one instance per concurrent rollout.

    Args:
        base_url: Where `toolgym serve` listens: one URL, or several (a list, or comma-separated text). A new
            session goes to the server a hash of its row's task address picks, so a GRPO group's sessions (one
            row repeated) meet on one server and share the task there; one that cannot be reached is skipped
            and the session is created on another. Every server that answers must serve the same version of
            the environment.
        env: Environment id; may be omitted when the servers serve exactly one environment.
        token: Bearer token, when the servers were started with `--token`.
        timeout: Seconds to wait for one server response.
        max_turns: The episodes' turn limit (each tool call is a turn) when a row gives none; None keeps each
            environment's own. A call past the limit is not run: the server answers that the episode reached its
            limit and scores it as `max_turns`, as `toolgym eval --max-turns` would.
        config: Environment config keys set over every row's config (e.g. a reward variant); the prompts stay the
            dataset's, so only keys that do not change the task belong here.
    """
    urls = split_urls(base_url)
    catalogs: dict[str, list[dict]] = {}
    unreachable = []
    for url in urls:
        try:
            catalogs[url] = list_environments(url, token)
        except ToolgymConnectionError as error:
            unreachable.append(error)
    if not catalogs:
        if len(unreachable) == 1:
            raise unreachable[0]
        raise ToolgymConnectionError("no toolgym server could be reached: " + "; ".join(str(error) for error in unreachable))
    first_url, environments = next(iter(catalogs.items()))
    ids = [entry["id"] for entry in environments]
    if env is None:
        if len(ids) != 1:
            raise ValueError(f"the server serves several environments ({', '.join(ids)}); pass env=ID")
        env = ids[0]
    entry = next((candidate for candidate in environments if candidate["id"] == env), None)
    if entry is None:
        raise ValueError(f"the server at {first_url} does not serve {env!r}; available: {', '.join(ids)}")
    for url, catalog in catalogs.items():
        other = next((candidate for candidate in catalog if candidate["id"] == env), None)
        if other is None or other.get("version") != entry.get("version"):
            found = "does not serve it" if other is None else f"runs version {other.get('version')}"
            raise ValueError(
                f"{env}: the server at {first_url} runs version {entry.get('version')} but the one at {url} {found}; "
                "run the same toolgym on every node"
            )
    return build_environment_class(entry, urls, token, timeout, max_turns, config)
