"""Paper scorecards from real corpus data: every sub-score, screening answer, flag and the history rule."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from frontend.views.papers import SUBSCORES
from papers.models import CodeRepo, Paper, Score
from papers.scoring.community import field_reports
from papers.scoring.inputs import ScoringInput, TextPart
from papers.scoring.rules import SUBSCORE_MAXIMA, ScoringConfig, score
from papers.scoring.services import score_paper
from papers.scoring.tasks import score_all_task, score_paper_task
from tests.papers import scoring_corpus as corpus

PYGITHUB_PUSHED = datetime(2024, 12, 19, 12, 1, 11, tzinfo=UTC)  # pushed_at in the recorded repo response
SCORED_AT = PYGITHUB_PUSHED + timedelta(days=12)


def paper_input(corpus_dir, arxiv_id: str, **fields) -> ScoringInput:
    meta = corpus.paper_meta(corpus_dir, arxiv_id)
    code_urls = (meta["code_url"],) if meta["code_url"] else ()
    return ScoringInput(arxiv_id=arxiv_id, title=meta["title"], code_urls=code_urls, **fields)


def items(card, subscore: str) -> dict:
    return {item.rule: item for item in card.subscores[subscore].items}


# --- code availability --------------------------------------------------------------------------

def test_a_maintained_official_repository_with_ci_earns_all_three_code_points(corpus_dir):
    inp = paper_input(corpus_dir, "2309.06180", repos=(corpus.repo_input(corpus_dir),))
    card = score(inp, SCORED_AT)
    code = items(card, "code_availability")
    assert card.subscores["code_availability"].value == 3
    assert "https://github.com/PyGithub/PyGithub" in code["official_repository"].evidence
    assert "2024-12-19, 12 days before scoring" in code["recent_commits"].evidence
    assert "check" in code["ci"].evidence and "Publish to PyPI" in code["ci"].evidence


def test_a_last_push_older_than_the_window_loses_the_recent_commit_point(corpus_dir):
    inp = paper_input(corpus_dir, "2309.06180", repos=(corpus.repo_input(corpus_dir),))
    card = score(inp, PYGITHUB_PUSHED + timedelta(days=31))
    assert items(card, "code_availability")["recent_commits"].points == 0
    assert "more than 30" in items(card, "code_availability")["recent_commits"].evidence
    assert card.subscores["code_availability"].value == 2
    assert score(inp, PYGITHUB_PUSHED + timedelta(days=31), ScoringConfig(recent_commit_days=60)).subscores[
        "code_availability"].value == 3


def test_a_repository_without_workflows_gets_no_ci_point(corpus_dir):
    repo = corpus.repo_input(corpus_dir, corpus.REPO_COMPAREA, workflows=None, has_ci=False)
    card = score(paper_input(corpus_dir, "2309.06180", repos=(repo,)), SCORED_AT)
    assert items(card, "code_availability")["ci"].points == 0
    assert "no CI workflows in danvk/comparea" in items(card, "code_availability")["ci"].evidence


def test_a_code_link_from_the_paper_list_counts_before_the_repository_is_crawled(corpus_dir):
    card = score(paper_input(corpus_dir, "1909.08053"), SCORED_AT)  # Megatron-LM, code_url in the list
    code = items(card, "code_availability")
    assert code["official_repository"].points == 1 and "github.com/NVIDIA/Megatron-LM" in code["official_repository"].evidence
    assert code["recent_commits"].evidence.startswith("unknown") and code["ci"].evidence.startswith("unknown")


def test_a_paper_without_code_gets_no_code_points_and_a_reimplementation_cost(corpus_dir):
    card = score(paper_input(corpus_dir, "2104.04473"), SCORED_AT)  # no code_url in the list
    assert card.subscores["code_availability"].value == 0
    assert "no code repository" in items(card, "code_availability")["official_repository"].evidence
    assert "no official code: must be reimplemented" in card.value_matrix["cost"]


# --- experimental realism -----------------------------------------------------------------------

def test_the_vllm_paper_uses_real_traces_real_gpus_and_end_to_end_metrics(corpus_dir):
    card = score(paper_input(corpus_dir, "2309.06180", texts=corpus.page_parts(corpus_dir, "2309.06180")), SCORED_AT)
    realism = items(card, "experimental_realism")
    assert card.subscores["experimental_realism"].value == 3
    assert "ShareGPT" in realism["real_trace"].evidence and "p." in realism["real_trace"].evidence
    assert "A100" in realism["real_hardware"].evidence
    assert "latency" in realism["end_to_end_metrics"].evidence.lower()
    assert card.screening["real_trace"].answer == "yes"
    assert card.screening["end_to_end_metrics"].answer == "yes"


def test_dataset_names_inside_identifiers_count_as_real_traces(corpus_dir):
    # Sarathi-Serve names its traces "openchat_sharegpt4" and "arxiv_summarization".
    card = score(paper_input(corpus_dir, "2403.02310", texts=corpus.page_parts(corpus_dir, "2403.02310")), SCORED_AT)
    assert "sharegpt" in items(card, "experimental_realism")["real_trace"].evidence.lower()


def test_synthetic_only_inputs_get_no_trace_point_and_answer_no(corpus_dir):
    card = score(paper_input(corpus_dir, "2407.15309", texts=corpus.page_parts(corpus_dir, "2407.15309")), SCORED_AT)
    trace = items(card, "experimental_realism")["real_trace"]
    assert trace.points == 0 and trace.evidence.startswith("only synthetic inputs") and "synthetic dataset" in trace.evidence
    assert card.screening["real_trace"].answer == "no"


def test_kernel_level_microbenchmarks_alone_are_not_end_to_end_metrics(corpus_dir):
    card = score(paper_input(corpus_dir, "2408.04275", texts=corpus.page_parts(corpus_dir, "2408.04275")), SCORED_AT)
    e2e = items(card, "experimental_realism")["end_to_end_metrics"]
    assert e2e.points == 0 and "only kernel-level timings" in e2e.evidence and "microbenchmark" in e2e.evidence
    assert card.screening["end_to_end_metrics"].answer == "no"


def test_a_training_system_is_screened_as_a_neighbour_and_scored_low(corpus_dir):
    # DistTrain (a training system): no serving word in its title, under 2% in its abstract, no serving metric.
    inp = paper_input(corpus_dir, "2408.04275", texts=corpus.page_parts(corpus_dir, "2408.04275"))
    card = score(inp, SCORED_AT)
    focus = card.screening["serving_focus"]
    assert focus.answer == "no" and "neighbour" in focus.evidence and "title and abstract" in focus.evidence
    unscaled = sum(sub.value for sub in card.subscores.values())
    assert card.total == round(unscaled * 0.3, 2) < unscaled and card.tier == "to_verify"


def test_a_serving_paper_passes_screening_by_its_title_and_keeps_its_full_total(corpus_dir):
    card = score(paper_input(corpus_dir, "2309.06180", texts=corpus.page_parts(corpus_dir, "2309.06180")), SCORED_AT)
    assert card.screening["serving_focus"].answer == "yes" and "title names it" in card.screening["serving_focus"].evidence
    assert card.total == round(sum(sub.value for sub in card.subscores.values()), 2)


def test_serving_focus_reads_the_abstracts_vocabulary_and_the_bodys_metrics():
    body = TextPart("§5 Evaluation", "We measure it. " * 200, 6)
    plain = "We study how to fit a model to data with fewer weights and report accuracy on benchmarks. " * 3

    def focus(title: str, abstract: str, texts=(body,)):
        return score(ScoringInput(arxiv_id="2401.00001", title=title, texts=(TextPart("abstract", abstract), *texts),
                                  facts_extracted=True), SCORED_AT).screening["serving_focus"]

    assert focus("Fewer Weights", plain).answer == "no"
    assert focus("Fewer Weights", plain + " Serving requests at low latency and high throughput.").answer == "yes"
    metric = TextPart("§5 Evaluation", "We report TTFT and TPOT of each request. " * 100, 6)
    assert focus("Fewer Weights", plain + " It can be deployed.", (metric,)).answer == "yes"
    assert focus("Fewer Weights", plain, (metric,)).answer == "no"  # a metric alone, with no serving word at all
    assert focus("Fewer Weights", plain, ()).answer == "unknown"  # body not read: no verdict


def test_titles_in_the_reference_list_are_not_evidence(corpus_dir):
    # vTensor cites "DistServe: ... goodput-optimized ..." on its last page; that must not score.
    pages = corpus.pdf_pages(corpus_dir, "2407.15309")
    refs_page = next(n for n, text in enumerate(pages, 1) if re.search(r"^References$", text, re.MULTILINE))
    card = score(paper_input(corpus_dir, "2407.15309", texts=corpus.page_parts(corpus_dir, "2407.15309")), SCORED_AT)
    for item in card.subscores["experimental_realism"].items:
        pages_cited = [int(part.split(":")[0]) for part in item.evidence.split("p.")[1:]]
        assert all(page <= refs_page for page in pages_cited), item
    assert "goodput-" not in items(card, "experimental_realism")["end_to_end_metrics"].evidence


def test_an_unparsed_paper_answers_unknown_rather_than_no(corpus_dir):
    card = score(paper_input(corpus_dir, "2309.06180"), SCORED_AT)
    assert {q: a.answer for q, a in card.screening.items()} == {  # serving focus: its title says "Serving"
        "serving_focus": "yes", "real_trace": "unknown", "end_to_end_metrics": "unknown",
        "reproducible_configuration": "unknown"}
    assert card.subscores["experimental_realism"].value == 0


# --- parameter transparency ---------------------------------------------------------------------

def test_three_or_more_published_parameter_values_earn_both_transparency_points(corpus_dir, shared_dir):
    facts = corpus.fact_inputs(corpus.gold_parameter_facts(shared_dir, "2407.00079"))
    card = score(paper_input(corpus_dir, "2407.00079", facts=facts, facts_extracted=True), SCORED_AT)
    evidence = items(card, "parameter_transparency")["published_values"].evidence
    assert card.subscores["parameter_transparency"].value == 2
    assert "5 parameter value(s) published" in evidence and "chunk_size" in evidence
    assert card.screening["reproducible_configuration"].answer == "yes"


def test_one_or_two_published_values_earn_one_point_with_the_quote(corpus_dir, shared_dir):
    facts = corpus.fact_inputs(corpus.gold_parameter_facts(shared_dir, "2309.06180"))
    card = score(paper_input(corpus_dir, "2309.06180", facts=facts, facts_extracted=True), SCORED_AT)
    evidence = items(card, "parameter_transparency")["published_values"].evidence
    assert card.subscores["parameter_transparency"].value == 1
    assert "block_size = 16 tokens" in evidence and "vLLM sets its default block size as 16" in evidence


def test_no_values_after_extraction_is_no_but_before_extraction_is_unknown(corpus_dir):
    extracted = score(paper_input(corpus_dir, "2104.04473", facts_extracted=True), SCORED_AT)
    assert extracted.screening["reproducible_configuration"].answer == "no"
    assert items(extracted, "parameter_transparency")["published_values"].evidence == "no configuration value published"
    pending = score(paper_input(corpus_dir, "2104.04473"), SCORED_AT)
    assert pending.screening["reproducible_configuration"].answer == "unknown"


# --- community feedback -------------------------------------------------------------------------

def test_field_reports_are_issues_not_pull_requests(corpus_dir):
    found = field_reports(tuple(corpus.recorded(corpus_dir, corpus.SEARCH_ISSUES)["items"]))
    titles = {report.title for report in found}
    assert "Persona 3 Portable 5th block crash *fixed*" in titles and "OMXPlayer randomly hangs" in titles
    assert "Make sceMpeg and sceAtrac basiclly workable for PC" not in titles  # a pull request
    assert all("/issues/" in report.url for report in found)
    assert field_reports(tuple(corpus.recorded(corpus_dir, corpus.ISSUES_PYGITHUB))) == []  # feature requests only


def test_the_crawlers_verdict_counts_even_when_the_stored_signal_has_no_body(corpus_dir):
    # production_signals keep title/url/matched only (papers.services.github); this recorded issue
    # says "crash" only in its body.
    [issue] = [i for i in corpus.recorded(corpus_dir, corpus.SEARCH_ISSUES)["items"] if i["number"] == 5218]
    stored = {"title": issue["title"], "url": issue["html_url"], "state": issue["state"], "matched": ["crash"]}
    assert field_reports(({**stored, "matched": []},)) == []
    [report] = field_reports((stored,))
    assert report.signal == "crash" and report.url == "https://github.com/TrinityCore/TrinityCore/issues/5218"


def test_a_popular_repository_with_active_issues_and_field_reports_gets_full_community_points(corpus_dir):
    repo = corpus.repo_input(corpus_dir, issues=corpus.SEARCH_ISSUES)
    card = score(paper_input(corpus_dir, "2309.06180", repos=(repo,)), SCORED_AT)
    community = items(card, "community_feedback")
    assert card.subscores["community_feedback"].value == 2
    assert community["popularity"].evidence == "PyGithub/PyGithub: 7122 stars, 1793 forks"
    assert community["issue_activity"].evidence == "357 open issues"
    assert "OMXPlayer randomly hangs" in community["production_reports"].evidence


def test_a_small_repository_without_field_reports_gets_only_issue_activity(corpus_dir):
    repo = corpus.repo_input(corpus_dir, corpus.REPO_COMPAREA, workflows=None, issues=corpus.ISSUES_PYGITHUB)
    card = score(paper_input(corpus_dir, "2309.06180", repos=(repo,)), SCORED_AT)
    community = items(card, "community_feedback")
    assert community["popularity"].points == 0 and "6 stars, 3 forks" in community["popularity"].evidence
    assert community["issue_activity"].points == 0.5
    assert community["production_reports"].points == 0
    assert card.subscores["community_feedback"].value == 0.5


# --- flags, tier, value matrix ------------------------------------------------------------------

def test_a_non_commercial_code_licence_is_flagged_and_raises_the_cost(corpus_dir):
    lgpl = score(paper_input(corpus_dir, "2309.06180", repos=(corpus.repo_input(corpus_dir),)), SCORED_AT)
    assert lgpl.flags == []
    # The recorded repository is LGPL-3.0; the same response with a CC BY-NC licence must be flagged.
    nc_repo = corpus.repo_input(corpus_dir, license_spdx="CC-BY-NC-4.0")
    card = score(paper_input(corpus_dir, "2309.06180", repos=(nc_repo,)), SCORED_AT)
    assert [f["code"] for f in card.flags] == ["non_commercial_license"]
    assert "CC-BY-NC-4.0" in card.flags[0]["detail"]
    assert "non-commercial licence" in card.value_matrix["cost"]


def test_a_paper_submitted_less_than_three_months_ago_is_too_fresh(corpus_dir):
    inp = paper_input(corpus_dir, "2408.12757")  # NanoFlow: no date in the list, so the arXiv id's month
    fresh = score(inp, datetime(2024, 9, 15, tzinfo=UTC))
    assert [f["code"] for f in fresh.flags] == ["too_fresh"]
    assert "2024-08 (from the arXiv id), 45 days" in fresh.flags[0]["detail"]
    assert score(inp, datetime(2025, 1, 7, tzinfo=UTC)).flags == []
    assert score(inp, datetime(2025, 1, 7, tzinfo=UTC), ScoringConfig(too_fresh_days=200)).flags[0]["code"] == "too_fresh"
    dated = replace(inp, published=datetime(2024, 8, 22, 17, 0, tzinfo=UTC))
    assert "submitted 2024-08-22" in score(dated, datetime(2024, 9, 15, tzinfo=UTC)).flags[0]["detail"]


def test_a_well_evidenced_paper_is_recommended_and_a_quick_win(corpus_dir, shared_dir):
    inp = paper_input(
        corpus_dir, "2407.00079", texts=corpus.page_parts(corpus_dir, "2407.00079"),
        repos=(corpus.repo_input(corpus_dir, issues=corpus.SEARCH_ISSUES),),
        facts=corpus.fact_inputs(corpus.gold_parameter_facts(shared_dir, "2407.00079")), facts_extracted=True,
    )
    card = score(inp, SCORED_AT)
    assert card.total == 10 and card.tier == "recommended"
    assert card.quadrant == "quick_win" and card.production_value == 5 and card.implementation_cost == 0
    assert "kv-cache" in card.topics


def test_a_paper_below_six_is_marked_to_verify(corpus_dir):
    card = score(paper_input(corpus_dir, "2407.15309", texts=corpus.page_parts(corpus_dir, "2407.15309")), SCORED_AT)
    assert card.total == 3 and card.tier == "to_verify"  # code link 1 + hardware 1 + end-to-end 1
    assert card.quadrant == "thankless" and "configuration not published" in card.value_matrix["cost"]


# --- storing scores: history and recomputation --------------------------------------------------

@pytest.fixture
def vllm_in_db(corpus_dir) -> Paper:
    paper = corpus.paper_in_db(corpus_dir, "2309.06180", pdf=True)
    corpus.link_recorded_repo(corpus_dir, paper)
    return paper


@pytest.mark.django_db
def test_rescoring_unchanged_inputs_keeps_one_row_and_changes_add_history(vllm_in_db, shared_dir):
    facts = corpus.gold_parameter_facts(shared_dir, "2309.06180")
    first, created = score_paper(vllm_in_db, SCORED_AT, facts=facts)
    assert created and first.total == 9 and first.is_latest and first.tier == "recommended"
    assert first.evidence["experimental_realism"][0]["rule"] == "real_trace"
    again, created = score_paper(vllm_in_db, SCORED_AT + timedelta(days=1), facts=facts)
    assert not created and again.pk == first.pk

    CodeRepo.objects.filter(full_name="PyGithub/PyGithub").update(stars=50, forks=5)
    changed, created = score_paper(vllm_in_db, SCORED_AT + timedelta(days=2), facts=facts)
    assert created and changed.community_feedback == 1.0
    history = list(Score.objects.filter(paper=vllm_in_db).order_by("id").values_list("total", "is_latest"))
    assert history == [(9.0, False), (8.0, True)]


@pytest.mark.django_db
def test_a_push_ageing_out_of_the_window_is_a_new_score_without_any_input_change(vllm_in_db, shared_dir):
    facts = corpus.gold_parameter_facts(shared_dir, "2309.06180")
    score_paper(vllm_in_db, SCORED_AT, facts=facts)
    later, created = score_paper(vllm_in_db, PYGITHUB_PUSHED + timedelta(days=45), facts=facts)
    assert created and later.code_availability == 2
    assert Score.objects.filter(paper=vllm_in_db).count() == 2


@pytest.mark.django_db
def test_score_papers_command_and_task_recompute_every_paper(vllm_in_db, corpus_dir, capsys):
    meta = corpus.paper_meta(corpus_dir, "2104.04473")
    bare = Paper.objects.create(arxiv_id=meta["arxiv_id"], title=meta["title"])
    call_command("score_papers")
    assert "scored 2 papers: 2 changed, 0 unchanged, 0 failed" in capsys.readouterr().out
    call_command("score_papers")
    assert "0 changed, 2 unchanged" in capsys.readouterr().out
    assert score_all_task.apply().get() == {"changed": 0, "unchanged": 2, "failed": 0}
    assert score_paper_task.apply(args=[bare.id]).get()["changed"] is False
    assert score_paper_task.apply(args=[10**9]).get() == {"paper_id": 10**9, "error": "paper not found"}
    assert Score.objects.get(paper=bare, is_latest=True).tier == "to_verify"


def test_each_sub_score_is_capped_by_the_one_table_of_maxima_that_the_paper_page_shows(corpus_dir):
    card = score(paper_input(corpus_dir, "2309.06180", texts=corpus.page_parts(corpus_dir, "2309.06180")), SCORED_AT)
    assert {name: sub.maximum for name, sub in card.subscores.items()} == SUBSCORE_MAXIMA
    assert [(field, top) for field, _, top in SUBSCORES] == list(SUBSCORE_MAXIMA.items())
    assert sum(SUBSCORE_MAXIMA.values()) == 10
