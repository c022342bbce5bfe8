# The PDFium text source's C helper (Makefile: helpers), built on the same base as the image
# (its C library) in a stage of its own: the compiler stays out of the final image.
FROM python:3.11-slim AS helper
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
COPY conversion/engine/_pdfium_chars.c /build/
RUN cc -O2 -ffp-contract=off -shared -fPIC -o /build/_pdfium_chars.so /build/_pdfium_chars.c

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# OCR of scanned pages: Tesseract 5's traineddata (English, orientation, the listed languages).
RUN apt-get update && apt-get install -y --no-install-recommends tesseract-ocr-eng tesseract-ocr-osd \
        tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-ara tesseract-ocr-chi-sim \
        tesseract-ocr-rus tesseract-ocr-heb tesseract-ocr-fas \
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
COPY --from=helper /build/_pdfium_chars.so conversion/engine/
# The admin's CSS and JavaScript, served by gunicorn through WhiteNoise; outside the data volume
# so that every image brings its own.
ENV SVCX_STATIC_ROOT=/app/static
RUN SVCX_VAR_DIR=/tmp/svcx-build python manage.py collectstatic --no-input -v 0 && rm -rf /tmp/svcx-build
RUN useradd --create-home svcx && mkdir -p /var/lib/svcx/beat && chown -R svcx /var/lib/svcx
USER svcx
EXPOSE 8000
