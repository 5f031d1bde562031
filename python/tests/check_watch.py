"""The reward-hacking watch against a running `toolgym serve` (used by test/trl-watch.test.ts).

    python check_watch.py URL

Plays search_plan_act episodes through the adapter's generated tool methods (no model): the server's reward
answers carry the watch, and `RewardWatch` fed those answers flags a run whose reward rises while its outcome
does not. Prints one JSON report; the TypeScript test asserts on it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolgym_trl import RewardWatch, WatchThresholds, environment_factory, reward_watch  # noqa: E402

SMALL_WORLD = {"worldSize": 15, "minHops": 1, "maxHops": 1, "impossibleRate": 0, "familyWeights": {"lookup": 0, "update": 1, "link": 0, "copy": 0, "conditional": 0, "composite": 0}}


def play(environment_class, index: int, finish: bool) -> dict:
    """One episode: a search, then finish at once or stop without finishing; returns the server's reward answer."""
    environment = environment_class()
    # The config as `toolgym dataset` writes it: JSON text (the adapter sets an override's keys over it)
    environment.reset(env="search_plan_act", split="train", seed=0, index=index, config=json.dumps(SMALL_WORLD))
    if finish:
        environment.finish(status="done")
    else:
        environment.search(query="record")
    answer = environment._fetch_breakdown()
    environment._close_session()
    return answer


def main() -> None:
    url = sys.argv[1]
    standard = environment_factory(url, env="search_plan_act")
    exploitable = environment_factory(url, env="search_plan_act", config={"reward": "without_outcome"})
    report: dict = {"catalog": standard._watch}
    report["standard_finish"] = play(standard, 0, finish=True)
    report["exploit_finish"] = play(exploitable, 0, finish=True)
    for answer in (report["standard_finish"], report["exploit_finish"]):
        answer.pop("diagnostics", None)

    # A run in miniature on the exploitable reward: ten batches of episodes that stop after a search, then ten of
    # episodes that finish at once (what a policy learns on this reward): the reward rises, the outcome stays 0
    logged: list[tuple[str, float]] = []
    watch = reward_watch(exploitable, WatchThresholds(window=3))
    for batch in range(6):
        answers = [play(exploitable, index, finish=batch >= 3) for index in range(4)]
        watch.observe(answers, lambda key, value: logged.append((key, value)))
    report["exploit_run"] = {"flagged": watch.flagged, "metrics": logged}

    # The same on the standard reward: finishing at once earns nothing, so nothing rises and nothing is flagged
    watch = reward_watch(standard, WatchThresholds(window=3))
    for batch in range(6):
        watch.observe([play(standard, index, finish=batch >= 3) for index in range(4)])
    report["standard_run"] = {"flagged": watch.flagged}

    # The rule alone, on hand-made answers: a real improvement (outcome keeps up with reward) is not flagged
    def answers(reward: float, outcome: float, share: float) -> list[dict]:
        marked = round(share * 10)
        return [{"total": reward, "watch": {"outcome": outcome, "signatures": ["x"] if position < marked else []}} for position in range(10)]

    real = RewardWatch(["x"], "outcome", WatchThresholds(window=2))
    for reward, outcome, share in [(0.5, 0.5, 0.0)] * 2 + [(0.9, 0.9, 0.5)] * 2:
        real.observe(answers(reward, outcome, share))
    flat = RewardWatch(["x"], "outcome", WatchThresholds(window=2))
    for reward, outcome, share in [(0.5, 0.5, 0.0)] * 2 + [(0.52, 0.3, 0.8)] * 2:
        flat.observe(answers(reward, outcome, share))
    hacked = RewardWatch(["x"], "outcome", WatchThresholds(window=2))
    for reward, outcome, share in [(0.5, 0.5, 0.0)] * 2 + [(0.9, 0.6, 0.5)] * 2:
        hacked.observe(answers(reward, outcome, share))
    report["rule"] = {"real": real.flagged, "reward_flat": flat.flagged, "hacked": hacked.flagged, "lost_only": hacked.observe([None, None])}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
