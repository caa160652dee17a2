"""MongoEngine's SequenceField as the primary key of `Ticket`, as its documentation shows.

The counter is `{ _id: "ticket.id", next }` in `mongoengine.counters`; the first value is 1.
Follows the protocol of `tests/interop/node/protocol.js`:

    mongoengine_writer.py <uri> <database> <count> <tasks> <tag>
"""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from mongoengine import Document, SequenceField, StringField, connect


class Ticket(Document):
    id = SequenceField(primary_key=True)
    by = StringField()


def main():
    uri, database, count, tasks, tag = sys.argv[1:6]
    count, tasks = int(count), int(tasks)
    connect(database, host=uri)
    Ticket.objects.create(by=tag)
    print("ready", flush=True)
    if not sys.stdin.readline():
        raise SystemExit("stdin closed before the start signal")
    lock = threading.Lock()
    left = [count - 1]

    def loop():
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            Ticket.objects.create(by=tag)

    with ThreadPoolExecutor(max_workers=tasks) as pool:
        for future in [pool.submit(loop) for _ in range(tasks)]:
            future.result()
    print(f"done {count}", flush=True)


if __name__ == "__main__":
    main()
