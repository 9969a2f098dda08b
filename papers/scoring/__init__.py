"""Paper scoring: a 0–10 scorecard with evidence, screening answers, a value matrix and flags.

Runs after a paper's facts are extracted or its repository is re-crawled (Celery task
"papers.tasks.score_paper_task") and on `manage.py score_papers`. The rules are pure functions of
a ScoringInput (papers.scoring.inputs), so they are testable without a database; the selectors
gather that input from the database and the services store the result.
"""
