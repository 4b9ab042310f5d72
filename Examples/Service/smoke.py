#!/usr/bin/env python3
"""Smoke test of the snack service, run by CI against its throwaway PostgreSQL cluster.

Starts two instances of the service on one database, follows the live endpoint of one while
writing through the other (a change crosses processes), checks CRUD, the merge rule, the batch
import, errors, resuming the live stream with Last-Event-ID, and a clean shutdown on SIGTERM
while a live request is open.

    python3 Examples/Service/smoke.py .build/debug/snack-service     # MODELSTORE_POSTGRES_URL set
"""
import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid


def start(binary):
    env = dict(os.environ, PORT="0")
    process = subprocess.Popen([binary], env=env, stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if line.startswith("listening on "):
            return process, int(line.split()[-1])
        if not line and process.poll() is not None:
            break
    sys.exit(f"the service did not start (exit {process.poll()})")


def call(port, method, path, body=None, expect=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
    connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    if expect is not None and response.status != expect:
        sys.exit(f"{method} {path}: expected {expect}, got {response.status}: {text}")
    return response.status, (json.loads(text) if text.startswith(("{", "[")) else text)


class Live:
    """Follows GET /snacks/changes in a thread; events arrive in a queue."""

    def __init__(self, port, last_event_id=None):
        self.events = queue.Queue()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        self.connection.request("GET", "/snacks/changes", headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.status
        assert self.response.getheader("Content-Type") == "text/event-stream"
        self.ended = threading.Event()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        event = {}
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    continue  # a comment: the service's heartbeat
                if not line:
                    if "data" in event:
                        self.events.put((event["id"], json.loads(event["data"])))
                    event = {}
                else:
                    name, _, value = line.partition(": ")
                    event[name] = value
        except Exception:
            pass
        self.ended.set()

    def expect(self, wanted, timeout=30):
        """Reads events until every (op, id) in `wanted` came; returns the last event id."""
        wanted, last = list(wanted), None
        deadline = time.time() + timeout
        while wanted:
            try:
                last, changes = self.events.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                sys.exit(f"live stream: still waiting for {wanted}")
            for change in changes:
                if (change["op"], change["id"]) in wanted:
                    wanted.remove((change["op"], change["id"]))
        return last


def main():
    binary = sys.argv[1]
    first, port_a = start(binary)
    second, port_b = start(binary)
    try:
        assert call(port_a, "GET", "/health", expect=200)[1] == "ok"
        live = Live(port_a)
        tag = uuid.uuid4().hex[:8]

        # Create through the other instance: the database assigns the id.
        _, plum = call(port_b, "POST", "/snacks", {"name": f"plum {tag}", "price": 1.5, "maker": "Orchard"}, expect=201)
        assert isinstance(plum["id"], int) and plum["price"] == 1.5, plum
        # A PUT without a price keeps the stored one (the merge rule).
        _, merged = call(port_b, "PUT", f"/snacks/{plum['id']}", {"name": f"plum {tag}", "maker": "Grove"}, expect=200)
        assert merged["price"] == 1.5 and merged["maker"] == "Grove", merged
        # A batch import in one transaction.
        batch = [{"name": f"{letter} {tag}", "price": price} for letter, price in (("apple", 0.5), ("cherry", 3.0), ("date", 1.0))]
        _, outcome = call(port_b, "POST", "/snacks/import", batch, expect=200)
        assert outcome == {"inserted": 3, "updated": 0, "unchanged": 0}, outcome
        _, cheap = call(port_a, "GET", "/snacks?maxPrice=1.5&rows=500", expect=200)
        mine = [snack["name"] for snack in cheap if snack["name"].endswith(tag)]
        assert mine == [f"apple {tag}", f"date {tag}", f"plum {tag}"], mine
        assert all(snack["price"] <= 1.5 for snack in cheap)
        ids = {snack["name"]: snack["id"] for snack in call(port_a, "GET", "/snacks?rows=500")[1]}
        inserted = [("insert", ids[f"{letter} {tag}"]) for letter in ("apple", "cherry", "date")]
        token = live.expect([("insert", plum["id"]), ("update", plum["id"])] + inserted)

        # Errors a client can act on.
        call(port_a, "GET", "/snacks/987654321", expect=404)
        call(port_a, "PUT", f"/snacks/{plum['id']}", "{not json", expect=400)
        call(port_a, "GET", "/snacks?rows=0", expect=400)
        # Only the database assigns ids: a PUT merges into a stored snack, or is a 404.
        call(port_a, "PUT", "/snacks/9223372036854775807", {"name": "far ahead"}, expect=404)

        # Delete, seen live; then a client that reconnects with the last id it had gets the
        # delete it missed, and nothing before it.
        call(port_b, "DELETE", f"/snacks/{plum['id']}", expect=204)
        call(port_b, "DELETE", f"/snacks/{plum['id']}", expect=404)
        call(port_a, "GET", f"/snacks/{plum['id']}", expect=404)
        live.expect([("delete", plum["id"])])
        resumed = Live(port_b, last_event_id=token)
        _, changes = resumed.events.get(timeout=30)
        assert {"op": "delete", "id": plum["id"]} in changes, changes
        assert not any(change["op"] == "insert" and change["id"] == plum["id"] for change in changes), changes

        # A token the service never sent is refused, not followed.
        connection = http.client.HTTPConnection("127.0.0.1", port_a, timeout=30)
        connection.request("GET", "/snacks/changes", headers={"Last-Event-ID": "bm90IGEgdG9rZW4="})
        assert connection.getresponse().status == 400

        # SIGTERM with live requests open: each instance drains them, closes its store and
        # exits 0.
        for process in (first, second):
            process.send_signal(signal.SIGTERM)
        for process in (first, second):
            code = process.wait(timeout=20)
            assert code == 0, f"the service exited {code}"
        assert live.ended.wait(5) and resumed.ended.wait(5), "a live stream stayed open after shutdown"
        print("snack-service smoke test passed: CRUD, merge, import, errors, live across instances, resume, shutdown")
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()


if __name__ == "__main__":
    main()
