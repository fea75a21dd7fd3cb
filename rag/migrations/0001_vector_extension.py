from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """The first migration: every later one may use the `vector` type."""

    initial = True
    dependencies = []
    operations = [VectorExtension()]
