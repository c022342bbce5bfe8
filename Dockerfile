FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN useradd --create-home svcx && mkdir -p /var/lib/svcx/beat && chown -R svcx /var/lib/svcx
USER svcx
EXPOSE 8000
