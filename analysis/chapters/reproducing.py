"""The reproducing page (book/reproducing), computed: one call gathers the protocol, the
machine, the package pins, the calibration, the regime and the operating point, with
every glue value; the notebook only displays them."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.runlog import load
from ..engine_link import (BAND, REGIME, RUNGS, confirmed_specs, ensure_runs, get_profile, load_calibration,
                           profile_specs, replacement_sentence)
from ..across_runs import operating_point, regime_reading
from ..render import machine, protocol_tables

# The re-run examples the page prints: (chapter, its papermill parameters).
EXAMPLES = (("reproducing", {"seeds": [6, 7, 8]}), ("stall", {"profile": "smoke", "seeds": [2]}))
NO_CHECKS = "No checking runs: this profile uses the capacity-based proposal as it is."
BAND_REACHED = {True: "landed in the article's regime", False: "did not land in the article's regime",
                None: "used the capacity-based proposal without checks"}
CALIBRATION_GLUED = ("capacity_tokens_per_s", "mean_output_tokens", "target_utilization", "proposed_rate")


@dataclass
class ReproducingPage:
    """What book/reproducing shows: `numbers` (every glue value by name), its tables (each a
    Styler without the index, but the calibration's checks, shown as a frame) and the
    re-run commands it prints."""

    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    commands: str = ""

    def table(self, name: str):
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]

    def checks_or_note(self):
        """The calibration's checking runs, or, when it made none, a line saying so (printed)."""
        checks = self.tables["checks"]
        if len(checks):
            return checks
        print(NO_CHECKS)
        return None


def band_reached(calibration: dict | None) -> str:
    """How the rate search ended, in the page's words."""
    return BAND_REACHED[(calibration or {}).get("band_reached")]


def rerun_commands(examples=EXAMPLES) -> str:
    """The papermill commands that re-run a chapter with other parameters, one a line."""
    return "\n".join(protocol_tables.papermill_command(chapter, **params) for chapter, params in examples)


def _protocol_numbers(proto: dict) -> dict:
    return {"profile": proto["profile"], "seeds": ", ".join(map(str, proto["seeds"])),
            "n_seeds": len(proto["seeds"]), "duration": proto["duration_s"], "n_rungs": len(proto["rungs"]),
            "n_runs": proto["runs"], "rate": proto["rate"], "overload_rate": proto["overload_rate"],
            "overload_factor": proto["overload_factor"],
            "overload_seeds": ", ".join(map(str, proto["overload_seeds"])), "minutes": proto["minutes_2core"]}


def _target_numbers() -> dict:
    """The article's regime as the page states it (engine/runs/target.py's figures)."""
    return {"band_low": BAND.low, "band_high": BAND.high, "band_ttft_s": BAND.max_ttft_p50_s,
            "fullness_target": REGIME.fullness, "fullness_low": REGIME.fullness_range[0],
            "fullness_high": REGIME.fullness_range[1],
            "article_p50": operating_point.ARTICLE_BASELINE["itl_p50_median_ms"],
            "article_b32": operating_point.ARTICLE_BASELINE["forward_ms_batch32"]}


def page(profile=None, seeds=None, duration=None, rate=None) -> ReproducingPage:
    """Everything book/reproducing shows; the baseline runs that are missing are made first
    (on a confirmed calibration: everything the page reads of the protocol is planned after)."""
    prof = get_profile(profile)
    baseline_specs = confirmed_specs(prof, lambda: [s for s in profile_specs(prof, seeds=seeds, duration=duration,
                                                                             rate=rate) if s.rung == RUNGS[0]],
                                     rate)
    proto = protocol_tables.protocol(profile, seeds, duration, rate)
    specs = profile_specs(prof, seeds=seeds, duration=duration, rate=rate)
    overload_specs = profile_specs(prof, overload=True, seeds=seeds, duration=duration, rate=rate)
    log = load(ensure_runs(baseline_specs[:1])[0])   # the baseline run of the first seed
    present = protocol_tables.cached_paths(specs + overload_specs)     # before the baseline's runs are made
    envs = machine.run_environments([load(p).provenance for p in present])
    calibration = load_calibration(prof.calibration, check_duration=prof.check_duration)
    cal = protocol_tables.calibration_summary(proto["rate_info"], calibration)
    versions = machine.package_versions()
    reg = regime_reading.build_regime(profile, seeds, duration, rate)
    baseline_logs = [load(p) for p in ensure_runs(baseline_specs)]
    op_sig = operating_point.signatures(baseline_logs, calibration)

    numbers = {**_protocol_numbers(proto), "first_run": f"{log.rung}, seed {log.seed}",
               "n_present": len(present), "n_envs": len(envs), "n_pins": len(versions),
               "n_pins_ok": int(versions["matches"].sum()), "cache_dir": proto["cache_dir"],
               "cache_env": proto["cache_env"], "rate_source": cal["source"], "rate_method": cal["method"],
               **_target_numbers(), "band_reached": band_reached(calibration),
               **{key: cal[key] for key in CALIBRATION_GLUED if key in cal},
               "has_calibration": calibration is not None, "regime_sentence": reg["sentence"],
               "carry_sentence": reg["carry"], "overlap_sentence": reg["overlap"],
               "freshness_sentence": replacement_sentence(calibration),
               "yardstick_sentence": reg["yardstick"],
               "op_sentence": operating_point.band_sentence(op_sig),
               "op_check": operating_point.check_sentence(op_sig, calibration, rate_info=proto["rate_info"])}
    hidden = {"protocol": protocol_tables.protocol_table(proto), "machine": machine.machine_table(log.provenance),
              "versions": versions, "calibration": protocol_tables.calibration_table(cal),
              "regime": reg["table"], "operating_point": operating_point.side_by_side(op_sig)}
    tables = {name: frame.style.hide(axis="index") for name, frame in hidden.items()}
    tables["checks"] = protocol_tables.calibration_checks(calibration)
    return ReproducingPage(numbers, tables, rerun_commands())
