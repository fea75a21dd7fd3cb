"""WSGI entry point (gunicorn ragsite.wsgi). Production settings unless told otherwise."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.production")

application = get_wsgi_application()

# The web process answers questions itself (sync and streamed): its models load now, in the
# background, rather than on the first question.
from rag.warmup import warm_in_background  # noqa: E402  (needs the app loaded)

warm_in_background()
