"""IR → IR passes between the frontend and a backend, chosen by the target: each rewrites what
the target lacks into what it has (a math call it cannot lower becomes a call of a prelude
`@pk.func`), and one lists the device features a kernel needs, with the locations that need
them, for the JIT layer to check against the device.
"""
