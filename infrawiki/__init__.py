"""InfraWiki Django project: settings, URLs, the Celery app and the embedded-runtime bootstrap."""
from .celery import app as celery_app

__all__ = ["celery_app"]
