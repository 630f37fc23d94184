"""The kernel object and what happens between a call and a launch: `kernel` (`@pk.kernel`,
variants per argument signature, the compile pipeline frontend → passes → backend), `cache`
(compiled modules on disk, keyed by their source and the compiler), `arguments` (checking
launch arguments against parameters), `binding` (packing them into the argument block, fast),
and `loop_status` (reading back loops a driver cut short).
"""
