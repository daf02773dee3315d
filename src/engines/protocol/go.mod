module plumb/engines/protocol

go 1.26.0
