# The Kenfold web and worker image used by docker-compose.yml.
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# kenfold_common (client/) has no dependencies; the server needs none of the client's parsers.
RUN pip install --no-cache-dir --no-deps ./client
RUN useradd --system --create-home kenfold
USER kenfold
EXPOSE 7077
CMD ["python", "manage.py", "serve"]
