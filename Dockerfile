FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake ffmpeg \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml requirements.lock ./
# The CPU build of torch; the default index would bring CUDA.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY . .
RUN pip install -c requirements.lock '.[local-models]' \
    && python manage.py prepare_models \
    && DEBUG=true STATIC_ROOT=/app/staticfiles python manage.py collectstatic --noinput
ENV STATIC_ROOT=/app/staticfiles
EXPOSE 8000
