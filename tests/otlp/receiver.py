#!/usr/bin/env python3
"""An OTLP/HTTP metrics receiver for tests/integration/otlp.rs and formats.rs (started by
tests/integration/support/otlp.rs).

Decodes every POST with the official OTLP definitions (the `opentelemetry-proto` package from
PyPI, installed by scripts/python-deps.sh) and appends one JSON line per request to --out:
{"n": request number, "t": arrival (epoch seconds), "path", "headers" (lower-case names),
"encoding", "status" (what was answered), "request": the ExportMetricsServiceRequest as
protobuf's json_format gives it (field names as in the .proto)}.

Behaviours: --require-header NAME=VALUE (401 without it), --fail-first N (the first N requests get
503 with Retry-After: --retry-after), --hang S (read the request, answer nothing for S seconds,
then close), --partial N (answer a partial success rejecting N points), TLS with --cert/--key,
and with --client-ca a client certificate from that CA required. Prints "PORT <n>" once
listening. Python standard library plus opentelemetry-proto.
"""

import argparse
import gzip
import http.server
import json
import ssl
import sys
import threading
import time

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--require-header", action="append", default=[])
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--retry-after", default="1")
    ap.add_argument("--client-ca")
    ap.add_argument("--hang", type=float, default=0.0)
    ap.add_argument("--partial", type=int, default=0)
    args = ap.parse_args()

    lock = threading.Lock()
    count = [0]
    required = [h.split("=", 1) for h in args.require_header]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                count[0] += 1
                n = count[0]
            record = {
                "n": n,
                "t": time.time(),
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "encoding": self.headers.get("Content-Encoding", ""),
            }
            if args.hang:
                record["status"] = "hang"
                self.write(record)
                time.sleep(args.hang)
                self.close_connection = True
                return
            if any(self.headers.get(k) != v for k, v in required):
                return self.answer(record, 401, b"missing header", "text/plain")
            if record["encoding"] == "gzip":
                body = gzip.decompress(body)
            req = metrics_service_pb2.ExportMetricsServiceRequest()
            req.ParseFromString(body)
            record["request"] = json_format.MessageToDict(
                req, preserving_proto_field_name=True)
            if n <= args.fail_first:
                return self.answer(record, 503, b"busy", "text/plain",
                                   [("Retry-After", args.retry_after)])
            resp = metrics_service_pb2.ExportMetricsServiceResponse()
            if args.partial:
                resp.partial_success.rejected_data_points = args.partial
                resp.partial_success.error_message = "test rejects some"
            self.answer(record, 200, resp.SerializeToString(), "application/x-protobuf")

        def answer(self, record, status, body, ctype, extra=()):
            record["status"] = status
            self.write(record)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def write(self, record):
            with lock:
                with open(args.out, "a") as f:
                    f.write(json.dumps(record) + "\n")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        if args.client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(args.client_ca)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
