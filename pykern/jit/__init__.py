"""The kernel object and what happens between a call and a launch, one job per module:
`kernel` (`@pk.kernel`, the user-facing object and the launch fast path), `variants` (which
compiled variant a launch's arguments select), `pipeline` (compiling one: frontend → checks →
SPIR-V → validation → disk cache → device program), `limits` (workgroup and shared memory
against the device), `cache` (compiled modules on disk, keyed by their source and the
compiler), `arguments` (checking launch arguments against parameters), `binding` (packing them
into the argument block, fast), `debug_launch` (debug launches and their reports), `interpreted`
(launches run by the interpreter), `strict_float` (`pk.strict_float()` and its warning) and
`loop_status` (reading back loops a driver cut short).
"""
