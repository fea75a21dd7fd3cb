"""ASGI entry point. Production settings unless told otherwise."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.production")

application = get_asgi_application()
