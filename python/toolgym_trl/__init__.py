"""toolgym_trl: train on toolgym environments with TRL's `GRPOTrainer(environment_factory=...)`.

    from toolgym_trl import environment_factory
    Env = environment_factory("http://127.0.0.1:8765", env="search_plan_act")
    trainer = GRPOTrainer(..., environment_factory=Env)

The adapter needs only the Python standard library; the server is `npx toolgym serve`.
"""

from __future__ import annotations

from .adapter import (
    SchemaNotExpressible,
    StaleDatasetError,
    ToolgymEnvironmentBase,
    build_environment_class,
    log_reward_components,
    method_source,
    prompt_hash,
    type_hint,
)
from .client import ServerClient, ToolgymConnectionError, ToolgymServerError

__all__ = [
    "environment_factory",
    "list_environments",
    "log_reward_components",
    "build_environment_class",
    "method_source",
    "type_hint",
    "ServerClient",
    "SchemaNotExpressible",
    "StaleDatasetError",
    "prompt_hash",
    "ToolgymEnvironmentBase",
    "ToolgymConnectionError",
    "ToolgymServerError",
]


def list_environments(base_url: str = "http://127.0.0.1:8765", token: str | None = None) -> list[dict]:
    """`GET /envs`: every environment the server serves, with its tool schemas."""
    client = ServerClient(base_url, token)
    try:
        return client.request("GET", "/envs")["environments"]
    finally:
        client.close()


def environment_factory(base_url: str = "http://127.0.0.1:8765", env: str | None = None, token: str | None = None, timeout: float = 60.0) -> type:
    """The class TRL instantiates with no arguments, one instance per concurrent rollout.

    Args:
        base_url: Where `toolgym serve` listens.
        env: Environment id; may be omitted when the server serves exactly one environment.
        token: Bearer token, when the server was started with `--token`.
        timeout: Seconds to wait for one server response.
    """
    environments = list_environments(base_url, token)
    ids = [entry["id"] for entry in environments]
    if env is None:
        if len(ids) != 1:
            raise ValueError(f"the server serves several environments ({', '.join(ids)}); pass env=ID")
        env = ids[0]
    entry = next((candidate for candidate in environments if candidate["id"] == env), None)
    if entry is None:
        raise ValueError(f"the server at {base_url} does not serve {env!r}; available: {', '.join(ids)}")
    return build_environment_class(entry, base_url, token, timeout)
