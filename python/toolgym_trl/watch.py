"""The reward-hacking watch: every scored training episode's reward, outcome and gaming signatures, per step.

`toolgym serve` answers each episode's reward with `watch: {outcome, signatures}` (the environment's outcome
component and the signatures of gaming it shows) for environments that declare a watch. `RewardWatch` is a TRL
reward function that adds nothing to the reward; it logs through TRL's `log_metric` (so `report_to` reaches
TensorBoard or W&B, and the step logs carry it):

    watch/reward_mean        mean total reward of the batch's scored episodes (before any --reward-transform)
    watch/outcome_mean       mean of the outcome component
    watch/gap                reward_mean - outcome_mean
    watch/signature/<name>   share of the scored episodes showing the signature
    watch/flag/<name>        1 while the signature is flagged, else 0

A signature is flagged when, comparing the last `window` scoring batches with the first `window`, its share rose by at
least `share_rise` while the mean reward rose by at least `reward_rise` and the mean outcome rose by less than
`outcome_ratio` times the reward's rise (reward up, outcome not keeping up). The first flag of each signature is
also logged as a warning (logger `toolgym_trl`). TRL scores one batch per generation round (per optimizer step with
its default `steps_per_generation`), so windows count steps there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .client import ToolgymConnectionError, ToolgymSessionLost

_log = logging.getLogger("toolgym_trl")


@dataclass(frozen=True)
class WatchThresholds:
    """When the watch warns (docs/training.md, "The watch"); every field is a `train_grpo.py --watch-*` flag."""

    window: int = 10
    share_rise: float = 0.2
    reward_rise: float = 0.05
    outcome_ratio: float = 0.5


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class RewardWatch:
    """A TRL reward function (always None: it only logs) that watches the episodes' rewards for signs of gaming."""

    def __init__(self, signatures: list[str], outcome: str | None = None, thresholds: WatchThresholds | None = None):
        self.signatures = list(signatures)
        self.outcome = outcome
        self.thresholds = thresholds or WatchThresholds()
        if self.thresholds.window < 1:
            raise ValueError("the watch's window must be at least 1 scoring batch")
        self.history: list[dict] = []
        self.flagged: list[str] = []  # in the order first flagged
        self.__name__ = "toolgym_watch"

    def __call__(self, environments=None, log_metric=None, **kwargs) -> list:
        count = len(environments) if environments else len(kwargs.get("prompts", []))
        if environments:
            self.observe([_breakdown(environment) for environment in environments], log_metric)
        return [None] * count

    def observe(self, breakdowns: list[dict | None], log_metric=None) -> dict | None:
        """Records one scoring batch (one reward answer per completion; None for a lost episode) and logs it."""
        scored = [answer for answer in breakdowns if answer is not None and answer.get("total") is not None]
        if not scored:
            return None
        watched = [answer["watch"] for answer in scored if isinstance(answer.get("watch"), dict)]
        outcomes = [float(watch["outcome"]) for watch in watched if watch.get("outcome") is not None]
        shares = {name: sum(name in (watch.get("signatures") or []) for watch in watched) / len(watched) for name in self.signatures} if watched else {}
        point = {"reward": _mean([float(answer["total"]) for answer in scored]), "outcome": _mean(outcomes), "shares": shares}
        self.history.append(point)
        flags = self._flags()
        metrics = {"watch/reward_mean": point["reward"]}
        if point["outcome"] is not None:
            metrics["watch/outcome_mean"] = point["outcome"]
            metrics["watch/gap"] = point["reward"] - point["outcome"]
        for name, share in shares.items():
            metrics[f"watch/signature/{name}"] = share
            metrics[f"watch/flag/{name}"] = 1.0 if name in flags else 0.0
        if log_metric is not None:
            for key, value in metrics.items():
                log_metric(key, value)
        return metrics

    def _flags(self) -> set[str]:
        """The signatures flagged at this batch: share up, reward up, outcome not keeping up (first vs last window)."""
        window = self.thresholds.window
        if len(self.history) < 2 * window:
            return set()
        first, last = self.history[:window], self.history[-window:]

        def average(points: list[dict], pick) -> float | None:
            return _mean([value for value in (pick(point) for point in points) if value is not None])

        reward_rise = average(last, lambda point: point["reward"]) - average(first, lambda point: point["reward"])
        outcome_first, outcome_last = average(first, lambda point: point["outcome"]), average(last, lambda point: point["outcome"])
        if reward_rise < self.thresholds.reward_rise or outcome_first is None or outcome_last is None:
            return set()
        if outcome_last - outcome_first >= self.thresholds.outcome_ratio * reward_rise:
            return set()
        flags = set()
        for name in self.signatures:
            share_first = average(first, lambda point: point["shares"].get(name))
            share_last = average(last, lambda point: point["shares"].get(name))
            if share_first is None or share_last is None or share_last - share_first < self.thresholds.share_rise:
                continue
            flags.add(name)
            if name not in self.flagged:
                self.flagged.append(name)
                _log.warning(
                    "toolgym watch: possible reward hacking at scoring batch %d: the share of episodes with signature %r rose "
                    "%.2f -> %.2f while the mean reward rose %.3f and the mean outcome moved %+.3f (first vs last %d batches)",
                    len(self.history),
                    name,
                    share_first,
                    share_last,
                    reward_rise,
                    outcome_last - outcome_first,
                    window,
                )
        return flags


def _breakdown(environment) -> dict | None:
    """The environment's reward answer (cached by the adapter), or None when its episode was lost."""
    fetch = getattr(environment, "_fetch_breakdown", None)
    if fetch is None or getattr(environment, "_lost", None) is not None:
        return None
    try:
        return fetch()
    except (ToolgymConnectionError, ToolgymSessionLost):
        return None  # its server stopped: get_reward leaves the sample out, and so does the watch


def reward_watch(environment_class, thresholds: WatchThresholds | None = None) -> RewardWatch:
    """The watch for a class from `environment_factory`: the signatures its environment declares (`GET /envs`)."""
    spec = getattr(environment_class, "_watch", None) or {}
    names = [signature["name"] for signature in spec.get("signatures", [])]
    return RewardWatch(names, spec.get("outcome"), thresholds)
