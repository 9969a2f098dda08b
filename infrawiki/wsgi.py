"""WSGI entry point for gunicorn (`make run`, Procfile)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
application = get_wsgi_application()
