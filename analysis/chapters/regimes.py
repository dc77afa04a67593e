"""The load sweep's page (book/regimes), computed: one call makes the sweep's runs (and the
ladder's baseline runs of its seeds), the glue values, the tables and the figures; the
notebook only displays them."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..engine_link import FORWARDS, get_profile, made_on_confirmed, profile_specs, sweep_specs
from ..across_runs import load_sweep
from ..across_runs.rungs import FIRST
from ..across_runs.summaries import run_summaries
from ..render import figures_sweep

WATERMARK_FORWARD = "article"     # the forward whose loads the watermark table judges
FAST_FORWARD = "fast"             # the forward whose rates are scaled by its measured capacity


@dataclass
class RegimesPage:
    """What book/regimes shows: `numbers` (every glue value by name), its tables and figures."""

    frame: pd.DataFrame            # one row per sweep run (load_sweep.sweep_frame)
    drain: dict                    # forward -> first load whose queue did not drain (nan: none)
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)

    def table(self, name: str):
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]

    def figure(self, name: str):
        makers = {"anatomy": lambda: figures_sweep.anatomy_figure(self.frame),
                  "percentiles": lambda: figures_sweep.percentiles_figure(self.frame),
                  "signature": lambda: figures_sweep.signature_figure(self.frame, self.drain)}
        if name not in makers:
            raise ValueError(f"unknown figure {name!r}; valid figures: {', '.join(makers)}")
        return makers[name]()


def drain_phrase(limit: float) -> str:
    """Where a forward's queue stopped draining, as the page's clause (nan: it never did)."""
    return "every load drained" if limit != limit else f"from {limit:.2f}x the operating point on, the queue did not drain"


def ladder_baselines(prof, seeds, rate=None) -> list:
    """The ladder's own baseline runs of `seeds`: those of the profile's ladder, at the rate
    its whole seed set was carried to, so the page reads the very runs the ladder reports (a
    subset of seeds, carried on its own, would ask for a rate of its own and another run).
    When any of them is not a ladder seed, all of them run at the rate carried to them together."""
    ladder = [s for s in profile_specs(prof, rungs=[FIRST], rate=rate) if s.seed in set(seeds)]
    return ladder if {s.seed for s in ladder} == set(seeds) else profile_specs(prof, rungs=[FIRST], seeds=seeds,
                                                                                   rate=rate)


def page(profile=None, seeds=None, duration=None, rate=None) -> RegimesPage:
    """Everything book/regimes shows; runs that are missing are made first. `rate` is the
    operating point's (article forward)."""
    prof = get_profile(profile)
    specs = made_on_confirmed(prof, lambda: sweep_specs(prof, seeds=seeds, duration=duration, rate=rate), rate)
    frame = load_sweep.sweep_frame(specs, run_summaries(specs))
    levels = sorted(set(frame["load"]))
    fast = [s for s in specs if s.config.forward == FAST_FORWARD]
    drain = {f: load_sweep.drain_limit(frame, f) for f in sorted(set(frame["forward"]))}
    out = RegimesPage(frame, drain)
    out.numbers.update(n_levels=len(levels), levels=", ".join(f"{x:g}" for x in levels),
                       n_seeds=frame["seed"].nunique(), duration=specs[0].duration, n_runs=len(specs),
                       op_rate=specs[0].rate_info["operating_point"],
                       fast_scale=fast[0].rate_info["capacity_scale"] if fast else float("nan"))
    # the ladder's full-length baseline runs of the sweep's seeds, to see how short runs read the rate
    ladder_specs = made_on_confirmed(prof, lambda: ladder_baselines(prof, sorted(set(frame["seed"])), rate), rate)
    ladder_pm = [s["preemptions"] * 60.0 / sp.duration for sp, s in zip(ladder_specs, run_summaries(ladder_specs))]
    out.numbers["short_runs"] = load_sweep.short_run_sentence(load_sweep.at_operating_point(frame), ladder_pm,
                                                              specs[0].duration, ladder_specs[0].duration)
    for forward in FORWARDS:
        subject = f"with the {forward} forward, preemption's share of baseline tail time"
        out.numbers[f"cross_{forward}"] = load_sweep.crossing_sentence(load_sweep.crossing_load(frame, forward),
                                                                       subject)
    for f, limit in drain.items():
        out.numbers[f"drain_{f}"] = drain_phrase(limit)
    wm = load_sweep.watermark_verdicts(frame, WATERMARK_FORWARD)
    out.numbers["wm_sentence"] = load_sweep.watermark_sentence(wm)
    out.tables["watermark"] = wm.round(2)
    out.numbers["fwd_sentence"] = load_sweep.forward_sentence(frame)
    out.tables["forwards"] = (load_sweep.forward_comparison(frame) * 100).round(1)
    return out
