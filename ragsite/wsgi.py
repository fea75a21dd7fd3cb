"""WSGI entry point (gunicorn ragsite.wsgi). Production settings unless told otherwise."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.production")

application = get_wsgi_application()
