"""The configurations of the cooperative-matrix GEMM (gemm_coop): how a workgroup's block of C
is cut among its subgroups, how deep a k slice it stages, and in how many shared stages.

A tiling is data: `python -m benchmarks tune` times every candidate on a device and records the
fastest by name in the device's table (pykern/ops/tuning/), which matmul reads through
`pykern.ops.choice.config`. Every candidate is tested against float64 in the interpreter.

    t = by_name("128x128-k8-2x2-s1")
    t.bm, t.bn, t.subgroups, t.shared_bytes(lanes=32)
"""

from __future__ import annotations

from dataclasses import dataclass

TILE = 16  # the accumulator tiles: 16 x 16
PAD_WORDS = 2  # 64-bit words each shared row is padded by (a skew of 16 bytes against bank
# conflicts between the rows a tile load touches)


@dataclass(frozen=True)
class CoopTiling:
    """A block of (sg_m * tiles_m * 16) x (sg_n * tiles_n * 16) of C per workgroup, computed by
    sg_m x sg_n subgroups, each holding tiles_m x tiles_n accumulator tiles of 16 x 16 (the
    A fragments of a k step are reused across a subgroup's tiles_n columns). Each k slice is
    `k_words` 64-bit words of every operand row (32 f16 or bf16 for 8, 64 for 16), staged in
    shared memory through registers one slice ahead; with `stages` 2 the shared arrays are
    doubled, so one barrier per slice separates the multiplies from the next slice's stores.
    With `group_m` > 1 the workgroups walk C in groups of that many block rows, column by
    column, so that the blocks running at once share their operands' slices in the L2
    cache. `word_bits` is the width of the shared arrays' elements the slices are stored as
    and the tiles loaded from (64, or 32: each 64-bit word stored as two halves)."""

    sg_m: int
    sg_n: int
    tiles_m: int
    tiles_n: int
    k_words: int = 8
    stages: int = 1
    group_m: int = 1
    word_bits: int = 64

    @property
    def name(self) -> str:
        """`BMxBN-kW-MxN-sS[-gG][-w32]`: the block, the slice's words, the subgroup grid, the
        stages, the block rows grouped, the shared words' width."""
        return (f"{self.bm}x{self.bn}-k{self.k_words}-{self.sg_m}x{self.sg_n}"
                f"-s{self.stages}" + (f"-g{self.group_m}" if self.group_m > 1 else "")
                + (f"-w{self.word_bits}" if self.word_bits != 64 else ""))

    @property
    def bm(self) -> int:
        return self.sg_m * self.tiles_m * TILE

    @property
    def bn(self) -> int:
        return self.sg_n * self.tiles_n * TILE

    @property
    def subgroups(self) -> int:
        return self.sg_m * self.sg_n

    def shared_bytes(self, elements_per_word: int) -> int:
        """Shared memory the kernel declares: both operands' stages (B's larger layout, k-major
        or transposed) and one 16 x 16 f32 tile per subgroup for the stores at the edges."""
        a = self.bm * (self.k_words + PAD_WORDS)
        b_rows = self.bn * (self.k_words + PAD_WORDS)
        b_cols = self.k_words * elements_per_word * (self.bn // elements_per_word + PAD_WORDS)
        words = self.stages * (a + max(b_rows, b_cols))
        return 8 * words + self.subgroups * TILE * TILE * 4

    def fits(self, lanes: int, shared_limit: int, elements_per_word: int = 4) -> bool:
        """Whether the tiling runs with subgroups of `lanes` invocations and `shared_limit`
        bytes of shared memory: each operand's slice splits evenly over the workgroup's
        invocations, and the workgroup is at most 1024 of them."""
        threads = lanes * self.subgroups
        slice_a = self.bm * self.k_words
        slice_b = self.bn * self.k_words
        return (8 <= lanes and threads <= 1024 and slice_a % threads == 0
                and slice_b % threads == 0 and (TILE * TILE) % lanes == 0
                and self.bn % (elements_per_word * 2) == 0 and self.k_words % 4 == 0
                and self.shared_bytes(elements_per_word) <= shared_limit)


# The block of 128 x 128 by 4 subgroups of 4 x 4 tiles: every device with tiles (the heuristic's
# choice where no table names the device).
DEFAULT = CoopTiling(2, 2, 4, 4)

CANDIDATES = (
    DEFAULT,
    CoopTiling(2, 2, 4, 4, group_m=8),
    CoopTiling(2, 2, 4, 4, stages=2, group_m=8),
    CoopTiling(2, 2, 4, 4, k_words=16, group_m=8),
    CoopTiling(2, 4, 4, 4, group_m=8),  # 128 x 256, 8 subgroups
    CoopTiling(4, 2, 4, 4, group_m=8),  # 256 x 128, 8 subgroups
    CoopTiling(4, 2, 2, 4, group_m=8),  # 128 x 128, 8 subgroups of 2 x 4 tiles
    CoopTiling(2, 4, 4, 2, stages=2, group_m=8),  # 128 x 128, 8 subgroups, double-buffered
    CoopTiling(4, 2, 2, 4, k_words=16, group_m=8),  # 128 x 128, 8 subgroups, slices of 64
    CoopTiling(2, 2, 4, 4, word_bits=32),  # the shared slices as 32-bit words
    CoopTiling(2, 2, 4, 4, stages=2, group_m=8, word_bits=32),
    CoopTiling(4, 2, 2, 4, k_words=16, group_m=8, word_bits=32),
    CoopTiling(2, 4, 4, 4, group_m=8, word_bits=32),
    CoopTiling(2, 2, 2, 4),  # 64 x 128: more blocks for outputs that do not fill the device
    CoopTiling(2, 2, 2, 2, stages=2),  # 64 x 64
)
"""Every tiling a device table may name (each tested in the interpreter)."""


def by_name(name: str) -> CoopTiling:
    """The candidate called `name` (a KeyError naming the candidates otherwise)."""
    for t in CANDIDATES:
        if t.name == name:
            return t
    raise KeyError(f"no cooperative-matrix tiling {name!r}; the candidates are "
                   f"{', '.join(t.name for t in CANDIDATES)}")
