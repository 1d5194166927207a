"""Earlier dialects of A2A (0.3 and the first draft), translated to and from
the 1.0 protos: their JSON shapes (json03, json01) and 0.3's own protobuf
messages (proto03). The one handler only ever sees 1.0."""
