"""The weekly digest: what each subscriber gets (selectors), the emails (emails), the claim-and-send
loop (services), "more like this" neighbours (similar) and the subscription forms (forms).

Runs weekly from Celery beat ("papers.tasks.send_digests_task") and from `manage.py send_digest`.
"""
