"""A seed demonstration episode, parsed by its contract (:mod:`.contract`), as the one model:
:func:`from_webshop_episode`. A clean episode's fast reading maps onto the same Trajectory
(:func:`.fast.fast_trajectory`); the webshop-demos reader and the EpisodeSet's cache read every seed
episode through one or the other (:meth:`.index.DemoFile.read_trajectory`).
"""

from __future__ import annotations

from pydantic import BaseModel

from replay_tui.episodes.model import Trajectory, TrajectoryStep, seed_success, webshop_outcome
from replay_tui.formats.webshop_demos.contract import DecisionStep, Episode, ItemPageAction
from replay_tui.formats.webshop_demos.fast import decision_step, event_step, item_step

SEED_STEP_FIELDS: tuple[str, ...] = tuple(name for name, info in DecisionStep.model_fields.items() if not info.exclude)
"""A seed decision step's recorded fields, in the contract's order: each has a place of its own in a
:class:`TrajectoryStep`, and a policy's ``recorded_step`` starts with them."""
_DECISION_FIELDS = frozenset(SEED_STEP_FIELDS)


def from_webshop_episode(episode: Episode) -> Trajectory:
    """The seed's WebShop episode (its contract's parse) as a Trajectory.

    Decision steps become ``decision`` steps (their prompt parsed into messages when first read,
    none when it does not parse; the page after the action as ``tool_result``); item-page actions
    ``item`` steps labelled as a replay labels them (``3.1``, ``3.2``... after decision 3); the other sub-events (detail
    exploration, the backup agent...) and an item-page action whose call maps to no env action
    ``event`` steps with the event verbatim in ``extra``; fields without a place of their own, the
    step's and the episode's, in ``extra``.
    """
    steps: list[TrajectoryStep] = []
    last_number, items = 0, 0
    for entry in episode.trajectory:
        if isinstance(entry, DecisionStep):
            last_number, items = entry.step_number, 0
            steps.append(_decision(entry, len(steps)))
            continue
        dumped = entry.model_dump(mode="json") if isinstance(entry, BaseModel) else dict(entry)
        action = entry.action if isinstance(entry, ItemPageAction) else None
        if isinstance(entry, ItemPageAction) and action is not None:
            items += 1
            label = f"{max(last_number, 0)}.{items}"
            call = entry.llm_action
            steps.append(item_step(entry, len(steps), label, call.name, call.arguments, action, dumped))
            continue
        steps.append(event_step(len(steps), f"{max(last_number, 0)}.-", dumped))
    extra = episode.model_dump(mode="json", exclude={"trajectory"})
    trajectory = Trajectory(
        id=str(episode.session_id),
        format="webshop-demos",
        task=episode.instruction,
        steps=steps,
        outcome=webshop_outcome(
            episode.final_reward,
            seed_success(episode.final_reward, episode.success),
            episode.completed_by_backup,
            episode.trajectory,
        ),
        extra=extra,
    )
    trajectory.problems = list(episode.problems)
    return trajectory


def _decision(entry: DecisionStep, index: int) -> TrajectoryStep:
    """A seed decision step (:class:`~replay_tui.formats.webshop_demos.contract.DecisionStep`) as the fast
    reading builds it (:func:`.fast.decision_step`), validated, with every field the contract dumps that
    has no place of its own in ``extra``."""
    data = entry.model_dump(mode="json")
    extra = {key: value for key, value in data.items() if key not in _DECISION_FIELDS}
    return decision_step(entry, index, extra, checked=False)
