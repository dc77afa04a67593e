"""The summary, the report and the takeaways state every finding's verdict from the one
findings table: each page is rendered from its own markdown with the values its cells
glue (analysis/render/pages.py), on a smoke-like and a quick-like synthetic build, and
every verdict a page attaches to a claim must be the table's."""
import re

import pytest

from analysis.render import pages
from analysis.across_runs import findings as F
from analysis.across_runs import takeaways
from analysis.across_runs.verdicts import LEADS
from tests.support.summaries import article_like

WORD_OF_LEAD = {v: k for k, v in LEADS.items()}


def smoke_like():
    """One seed, no preemption and no fallback anywhere: the mechanisms never fired."""
    return [{**r, "preemptions": 0, "eager_steps": 0, "gaps": 900,
             "tail_share": {**r["tail_share"], "preempt": 0.0}} for r in article_like((1,))]


def quick_like():
    """Two seeds; the watermark's TTFT fell in one (did not hold), the p99.9 collapse held."""
    runs = [{**r, "gaps": 9000} for r in article_like((1, 2))]
    return [{**r, "ttft_p50": 50.0} if r["rung"] == "+admit watermark" and r["seed"] == 2 else r for r in runs]


def _summary_verdicts(text, found):
    """claim -> verdict word, from the summary's lead-ins ('Held here: claim.', 'Mixed here:
    claim (word); ...')."""
    out = {}
    for lead, body in re.findall(r"\*\*(Held here|Did not hold here|Not testable here|Mixed here): (.+?)\.\*\*", text):
        if lead == "Mixed here":
            for claim, word in re.findall(r"(.+?) \(([a-z ]+)\)(?:; |$)", body):
                out[claim] = word
        else:
            for claim in body.split("; "):
                out[claim] = WORD_OF_LEAD[lead]
    return out


def _render_summary(found, runs):
    values = pages.summary_values(found, runs, len({r["seed"] for r in runs}), 20.0, 7)
    return pages.render(pages.markdown_of("summary"), values)


@pytest.mark.parametrize("make", [smoke_like, quick_like])
def test_every_page_states_the_findings_tables_verdict(make):
    runs = make()
    found = F.findings(runs)
    word = dict(zip(found["claim"], found["verdict"]))

    text = _render_summary(found, runs)
    summary = _summary_verdicts(text, found)
    for bullet in text.split("\n- **")[1:]:        # a bullet's body says what its heading says
        lead = bullet.split(":", 1)[0]
        for said in re.findall(r"[Tt]his\s+(held|did not hold|was not testable)", bullet):
            assert said.removeprefix("was ") == WORD_OF_LEAD[lead], bullet
    assert len(summary) >= 9                        # every bullet's finding was read back
    assert {c: w for c, w in summary.items()} == {c: word[c] for c in summary}

    report = pages.report_table(found)
    for claim, text in report["verdict"].items():
        assert text.split(" (")[0] == word[claim], claim

    take = takeaways.cost_finding_sentence(found)
    claim = found.loc["watermark_ttft", "claim"]
    assert take == f'The article\'s finding "{claim}" {F.verdict(found, "watermark_ttft")} here.'
    assert take.split(f'"{claim}" ')[1].removeprefix("was ").startswith(word[claim])

    counts = F.verdict_counts(found)
    assert counts["n_held"] + counts["n_not"] + counts["n_untestable"] == len(found)


def test_the_summary_renders_every_glue_it_cites_about_findings():
    runs = quick_like()
    text = _render_summary(F.findings(runs), runs)
    leftover = set(re.findall(r"(?<!\})\{([a-z_0-9]+)\}(?!`)", text))
    # the rest are glued by the notebook itself (the profile, the rate, the load sweep, overload,
    # the regime sentence of analysis.across_runs.operating_point)
    assert leftover <= {"profile_name", "n_runs", "n_rungs", "n_seeds", "duration", "rate_clause",
                        "overload_note", "sweep_line", "regime_sentence"}, leftover


def test_a_heading_agrees_with_its_body_on_the_ladders_ends():
    runs = quick_like()
    runs = [{**r, "itl_max": 9000.0} if r["rung"] == "+admit watermark" else r for r in runs]  # max did not fall
    found = F.findings(runs)
    assert found.loc["p999_end", "verdict"] == "held" and found.loc["max_end", "verdict"] == "did not hold"
    text = _render_summary(found, runs)
    bullet = next(line for line in text.splitlines() if "the ladder collapses p99.9" in line)
    assert bullet.startswith("- **Mixed here:")
    assert "the ladder collapses the worst gap (did not hold)" in bullet


def test_the_summary_and_report_open_with_the_protocol_and_its_power():
    runs = quick_like()
    found = F.findings(runs)
    summary = _render_summary(found, runs)
    report = pages.render(pages.markdown_of("report"), pages.report_values(found, runs, 2, 20.0, 7))
    for text in (summary, report):
        assert "This build ran 2 seeds x 20 s of arrivals on each of 7 rungs, against the article's 5 x 60 s" in text
        assert "p99.9 rests on its slowest 9 gap(s)" in text
        assert "the smallest p-value a paired comparison can reach is 0.5" in text
    assert summary.index("This build ran 2 seeds") < summary.index("## The headline findings")
    assert report.index("This build ran 2 seeds") < report.index("## The fix ladder")
    # both open with the regime sentence (which regime the build ran in), before the power
    for md in (pages.markdown_of("summary"), pages.markdown_of("report")):
        assert "{glue:text}`regime_sentence`" in md
    for text in (summary, report):
        assert text.index("{regime_sentence}") < text.index("This build ran 2 seeds")


def test_the_summary_defines_its_words_before_the_findings_use_them():
    text = pages.markdown_of("summary")
    first_use = text.index("## The headline findings")
    for label in ("glossary-itl", "glossary-ttft", "glossary-percentiles", "glossary-tail", "glossary-rung",
                  "glossary-operating-point", "glossary-capacity"):
        assert text.index(label) < first_use, label
        assert f"({label})=" in pages.markdown_of("glossary"), label


def test_ladder_cells_state_coverage_and_do_not_read_no_change_with_two_seeds():
    from analysis.across_runs import paired
    runs = quick_like()
    cells = paired.verdict_cells(paired.ladder_verdicts(runs))
    end = cells.loc["end to end", "p99.9"]
    assert end == "0.06x [0.06-0.06, 50%] cannot be judged with 2 seeds"      # was "0.06x [0.06-0.06] no change"
    assert not any("no change" in c for c in cells.to_numpy().ravel())


def test_the_report_names_the_forward_pass_as_every_other_page_does():
    from analysis.across_runs import ladder_steps
    cols = set(ladder_steps.tail_share_side_by_side(quick_like()).columns.get_level_values(0))
    assert "fwd" in cols and "kernel" not in cols


def test_the_strongest_verdict_of_few_seeds_is_cannot_be_judged():
    from analysis.across_runs import verdicts
    assert verdicts.strongest(2) == "cannot be judged with 2 seeds"
    assert verdicts.strongest(5) == "suggestive" and verdicts.strongest(6) == "established"
