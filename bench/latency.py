"""Search through HTTP on the yardsticks' sets, and where its time goes (issue 19, part 6).

    python -m bench latency                 k 8 (the API's default) and k 50 (what the yardsticks read)

One bench database, one Celery worker thread and two daphnes started as `make run` starts them: the
app as it is (the embedding model on ONNX Runtime) and, as the baseline, the same app embedding through
sentence-transformers and torch (`EMBEDDING_ONNX=false`). One user per set: LoCoMo's first tuning
conversation typed line by line, the eight SQuAD articles, the personal notes and PDFs. Each question
goes to `GET /api/search` of both servers, one search after another, the order alternating; the
client's time is split by the response's `Server-Timing` header (secondbrain/timing.py) into token
check, reading the question's time words, the names look-up, the embedding, the SQL statement, the
rest of the app (routing, validation, JSON), and what lies outside the app (HTTP, ASGI, the thread hop).
"""

import argparse
import statistics
import time
import urllib.parse
import urllib.request

from bench.common import percentile

PARTS = ("auth", "time", "names", "embed", "sql")


def timed_search(url: str, token: str, question: str, k: int) -> dict[str, float]:
    """The client's time (`client`) and the server's spans for one search, in milliseconds."""
    query = urllib.parse.urlencode({"q": question, "k": k})
    request = urllib.request.Request(f"{url}/api/search?{query}", headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        header = response.headers["Server-Timing"]
    spans = {"client": (time.perf_counter() - started) * 1000}
    for part in header.split(","):
        name, _, duration = part.strip().partition(";dur=")
        spans[name] = spans.get(name, 0.0) + float(duration)
    spans["rest of the app"] = spans["app"] - sum(spans.get(name, 0.0) for name in PARTS)
    spans["outside the app"] = spans["client"] - spans["app"]
    return spans


def report(name: str, samples: list[dict[str, float]], baseline: list[dict[str, float]] | None = None) -> None:
    def column(key: str, rows: list[dict[str, float]] = samples) -> list[float]:
        return [sample.get(key, 0.0) for sample in rows]

    client = column("client")
    ratio = f" (×{percentile(client, 0.95) / percentile(column('client', baseline), 0.95):.2f})" if baseline else ""
    print(
        f"  {name}: {len(samples)} searches, client p50 {statistics.median(client):.1f} ms, "
        f"p95 {percentile(client, 0.95):.1f} ms{ratio}; server (`app`) p50 {statistics.median(column('app')):.1f} ms"
    )
    parts = [*PARTS, "rest of the app", "outside the app"]
    print("    mean ms: " + ", ".join(f"{key} {statistics.fmean(column(key)):.1f}" for key in parts))
    print("    p95 ms:  " + ", ".join(f"{key} {percentile(column(key), 0.95):.1f}" for key in parts))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, action="append", help="results per search (default: 8 and 50)")
    args = parser.parse_args(argv or [])

    from celery.contrib.testing.worker import start_worker
    from django.db import connection

    from bench import personal, squad
    from bench.common import bench_database, setup_django
    from bench.connections import Variant, database_url, web
    from bench.locomo import HALVES, PASSWORD, HttpApi, _ok, conversations, ingest, wait_for_jobs

    setup_django()
    with bench_database():
        from secondbrain.celery import app

        with (
            start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest"], loglevel="WARNING"),
            web(Variant("app", {}), database_url(connection.settings_dict)) as url,
            web(Variant("torch", {"EMBEDDING_ONNX": "false"}), database_url(connection.settings_dict)) as torch_url,
        ):
            api = HttpApi(url)
            sets: dict[str, tuple[str, list[str]]] = {}
            conversation = next(c for c in conversations(note_format="typed") if c.sample_id == HALVES["tune"][0])
            sets["LoCoMo " + conversation.sample_id] = (
                ingest(api, conversation),
                [q.text for q in conversation.questions],
            )
            token = _ok(
                api.request("POST", "/api/auth/register", body={"username": "squad", "password": PASSWORD}), 201
            )
            articles = squad.articles()
            jobs = [
                _ok(
                    api.request("POST", "/api/notes", token=token["token"], body={"title": a.title, "text": a.text}),
                    202,
                )
                for a in articles
            ]
            wait_for_jobs(api, token["token"], [job["job_id"] for job in jobs], "squad")
            sets["SQuAD"] = (token["token"], [q.text for a in articles for q in a.questions])
            sets["personal"] = (personal.ingest(api, personal.documents()), [q.text for q in personal.questions()])
            servers = {"app (ONNX Runtime)": url, "baseline (torch)": torch_url}
            for server in servers.values():
                for _ in range(20):  # the embedding model and the connections warm up
                    timed_search(server, sets["personal"][0], "warm up", 8)
            for k in args.k or [8, 50]:
                print(f"GET /api/search through HTTP, k {k}, one search after another:")
                for name, (user_token, questions) in sets.items():
                    samples: dict[str, list[dict[str, float]]] = {server: [] for server in servers}
                    for i, question in enumerate(questions):
                        for server in sorted(servers, reverse=bool(i % 2)):  # neither always goes first
                            samples[server].append(timed_search(servers[server], user_token, question, k))
                    report(f"{name}, baseline (torch)", samples["baseline (torch)"])
                    report(f"{name}, app (ONNX Runtime)", samples["app (ONNX Runtime)"], samples["baseline (torch)"])


if __name__ == "__main__":
    main()
