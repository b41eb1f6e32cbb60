"""The index math of the CUDA int8 conv's two tiled kernels (engine/backends/cuda/quant/int8_tiles.cu,
Note [int8 tiles]) replayed on the host, thread by thread, over small shapes: every output element
written exactly once, from the right source, with no load or store outside its tensor or
misaligned for its width. This REIMPLEMENTS the kernels' formulas in Python (the lane layout, the
tile loops, the fast and fallback paths, __byte_perm): a change to the kernels must be mirrored
here. It checks indexing only; the values' arithmetic is tests/cuda/test_cuda_int8.py's (CUDA
against the CPU, bit for bit, on a GPU). Runs on the CPU, without dnnx."""
import itertools

import numpy as np
import pytest

THREADS, MAX_X, MAX_Y = 256, 1 << 20, 65535


def byte_perm(x, y, s):
    pool = [(x >> 8 * i) & 0xFF for i in range(4)] + [(y >> 8 * i) & 0xFF for i in range(4)]
    return sum(pool[(s >> 4 * n) & 7] << 8 * n for n in range(4))


def pack(b):
    return b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24


class Memory:
    """A tensor of `size` elements of `width` bytes at byte address `base`: loads and stores check
    bounds and alignment, stores count writes."""

    def __init__(self, data, base, width=1):
        self.data, self.base, self.width = data, base, width
        self.writes = np.zeros(len(data), np.int64)

    def index(self, addr, count):
        assert addr % (count * self.width if count > 1 else self.width) == 0, ("misaligned", addr, count)
        i = (addr - self.base) // self.width
        assert 0 <= i and i + count <= len(self.data), ("out of bounds", i, count, len(self.data))
        return i

    def load(self, addr, count):
        i = self.index(addr, count)
        return [self.data[i + k] for k in range(count)]

    def store(self, addr, values):
        i = self.index(addr, len(values))
        for k, v in enumerate(values):
            self.data[i + k] = v
            self.writes[i + k] += 1


def load_word(xm, a, end):  # int8_tiles.cu's load_word: a, end are byte addresses
    k = a & 3
    if k == 0:
        return pack(xm.load(a, 4))
    a4 = a - k
    if a4 >= xm.base and a4 + 8 <= end:
        return byte_perm(pack(xm.load(a4, 4)), pack(xm.load(a4 + 4, 4)), 0x3210 + 0x1111 * k)
    return pack([xm.load(a + i, 1)[0] for i in range(4)])


def transpose4(v):
    t0, t1 = byte_perm(v[0], v[1], 0x5140), byte_perm(v[0], v[1], 0x7362)
    t2, t3 = byte_perm(v[2], v[3], 0x5140), byte_perm(v[2], v[3], 0x7362)
    return [byte_perm(t0, t2, 0x5410), byte_perm(t0, t2, 0x7632), byte_perm(t1, t3, 0x5410), byte_perm(t1, t3, 0x7632)]


def pad_launch(cp):  # launch_int8_nhwc_pad's tile choice
    quads = cp // 4
    lanes_c_log2 = 3 if quads >= 8 else 2 if quads >= 3 else quads - 1
    warps_c = 2 if quads > 8 else 1
    return lanes_c_log2, warps_c


def run_nhwc_pad(x, flip, zp, s, x_base, out_base):
    n_, c_, h_, w_, pad_h, pad_w, hp, wp, cp = s
    xm = Memory([int(b) for b in x.reshape(-1)], x_base)
    om = Memory([None] * (n_ * hp * wp * cp), out_base)
    lanes_c_log2, warps_c = pad_launch(cp)
    plane, hw = hp * wp, h_ * w_
    pixels = n_ * plane
    end = x_base + n_ * c_ * hw
    flip4 = flip * 0x01010101
    lanes_c, warp_pixels = 1 << lanes_c_log2, 8 * (32 >> lanes_c_log2)
    tile_c, tile_p = 4 * lanes_c * warps_c, warp_pixels * (8 // warps_c)
    p_tiles, c_tiles = -(-pixels // tile_p), -(-cp // tile_c)
    grid = (min(p_tiles, MAX_X), min(c_tiles, MAX_Y))
    for bx, by, t in itertools.product(range(grid[0]), range(grid[1]), range(THREADS)):
        lane, warp = t & 31, t >> 5
        c_in_tile = (warp % warps_c) * 4 * lanes_c + (lane & (lanes_c - 1)) * 4
        p_in_tile = (warp // warps_c) * warp_pixels + (lane >> lanes_c_log2) * 8
        for tp in range(bx, p_tiles, grid[0]):
            q0 = tp * tile_p + p_in_tile
            if q0 >= pixels:
                continue
            src, n, oh, ow = [], q0 // plane, q0 % plane // wp, q0 % wp
            for j in range(8):
                h, w = oh - pad_h, ow - pad_w
                src.append(n * c_ * hw + h * w_ + w if n < n_ and 0 <= h < h_ and 0 <= w < w_ else -1)
                ow += 1
                if ow == wp:
                    ow, oh = 0, oh + 1
                    if oh == hp:
                        oh, n = 0, n + 1
            run = [src[4 * k] >= 0 and all(src[4 * k + j] == src[4 * k] + j for j in range(4)) for k in range(2)]
            run8 = run[0] and run[1] and src[4] == src[0] + 4
            for tc in range(by, c_tiles, grid[1]):
                c4 = tc * tile_c + c_in_tile
                if c4 >= cp:
                    continue
                v = [[0, 0] for _ in range(4)]
                for i in range(4):
                    c = c4 + i
                    if c >= c_:
                        continue
                    xc = x_base + c * hw
                    if run8 and (xc + src[0]) % 8 == 0:
                        b = xm.load(xc + src[0], 8)
                        v[i] = [pack(b[:4]) ^ flip4, pack(b[4:]) ^ flip4]
                        continue
                    for k in range(2):
                        if run[k]:
                            v[i][k] = load_word(xm, xc + src[4 * k], end) ^ flip4
                        else:
                            v[i][k] = pack([xm.load(xc + o, 1)[0] ^ flip if o >= 0 else zp & 0xFF
                                            for o in src[4 * k:4 * k + 4]])
                for k in range(2):
                    o = transpose4([v[i][k] for i in range(4)])
                    for j in range(4):
                        q = q0 + 4 * k + j
                        if q < pixels:
                            om.store(out_base + q * cp + c4, [(o[j] >> 8 * b) & 0xFF for b in range(4)])
    return np.array(om.data, np.uint8).reshape(n_, hp, wp, cp), om.writes


def nhwc_pad_reference(x, flip, zp, s):
    n_, c_, h_, w_, pad_h, pad_w, hp, wp, cp = s
    out = np.full((n_, hp, wp, cp), zp & 0xFF, np.uint8)
    out[:, :, :, c_:] = 0
    out[:, pad_h:pad_h + h_, pad_w:pad_w + w_, :c_] = x.transpose(0, 2, 3, 1) ^ flip
    return out


# (N, C, H, W, pad_h, pad_w, pads_end_h, pads_end_w), then X's and out's byte addresses mod 8
PAD_SHAPES = [
    (1, 3, 9, 9, 1, 1, 1, 1), (3, 5, 7, 11, 0, 3, 2, 1), (2, 64, 8, 8, 0, 0, 0, 0), (2, 64, 8, 8, 1, 1, 1, 1),
    (3, 7, 1, 23, 0, 2, 0, 1), (1, 4, 1, 131, 0, 0, 0, 0), (2, 36, 7, 7, 0, 0, 0, 0), (1, 100, 5, 6, 1, 1, 1, 1),
    (1, 257, 2, 3, 0, 0, 0, 0), (5, 64, 1, 1, 0, 0, 0, 0), (67, 8, 5, 5, 0, 0, 0, 0), (2, 3, 16, 16, 3, 3, 3, 2),
    (1, 1, 6, 10, 2, 0, 1, 3), (2, 12, 3, 4, 0, 1, 0, 0), (1, 16, 14, 14, 1, 1, 1, 1), (1, 20, 4, 4, 0, 0, 2, 2),
]


@pytest.mark.parametrize("shape", PAD_SHAPES)
@pytest.mark.parametrize("x_off", [0, 3])
def test_nhwc_pad_kernel_writes_every_byte_once_from_its_source(shape, x_off):
    n, c, h, w, ph, pw, eh, ew = shape
    cp = (c + 3) // 4 * 4
    s = (n, c, h, w, ph, pw, h + ph + eh, w + pw + ew, cp)
    x = np.random.default_rng(c * 31 + w).integers(0, 256, (n, c, h, w), dtype=np.uint8)
    for flip, zp in [(0x80, -7), (0, 5)]:
        got, writes = run_nhwc_pad(x, flip, zp, s, 0x1000 + x_off, 0x2000)
        assert (writes == 1).all(), np.unique(writes, return_counts=True)
        np.testing.assert_array_equal(got, nhwc_pad_reference(x, flip, zp, s))


def run_epilogue_nchw(sums, ld, channels, plane, z, sums_base, y_base, z_base, width):
    """y's elements as (sum, m, z byte) triples: the indexing of the kernel, not its arithmetic."""
    rows = len(sums) // ld
    sm = Memory([int(v) for v in sums], sums_base, 4)
    ym = Memory([None] * (rows * channels), y_base, width)
    zm = Memory([int(b) for b in z], z_base) if z is not None else None
    warps_m = 4 if channels > 32 else 2 if channels > 16 else 1
    tile_m, tile_q = 16 * warps_m, 32 * (8 // warps_m)
    m_tiles, q_tiles = -(-channels // tile_m), -(-rows // tile_q)
    grid = (min(q_tiles, MAX_X), min(m_tiles, MAX_Y))

    def element(e, s, m):  # epilogue_element: reads z[e] (1 byte), stores y[e]
        zb = zm.load(z_base + e, 1)[0] if zm else 0
        ym.store(y_base + e * width, [(s, m, zb)])

    for bx, by, t in itertools.product(range(grid[0]), range(grid[1]), range(THREADS)):
        lane, warp = t & 31, t >> 5
        m_in_tile, q_in_tile = (warp % warps_m) * 16 + (lane & 3) * 4, (warp // warps_m) * 32 + (lane >> 2) * 4
        for tm in range(by, m_tiles, grid[1]):
            m0 = tm * tile_m + m_in_tile
            if m0 >= channels:
                continue
            for tq in range(bx, q_tiles, grid[0]):
                r0 = tq * tile_q + q_in_tile
                if r0 >= rows:
                    continue
                s = [[0] * 4 for _ in range(4)]
                for j in range(4):
                    if r0 + j >= rows:
                        continue
                    row = sums_base + 4 * ((r0 + j) * ld + m0)
                    if m0 + 4 <= ld and row % 16 == 0:
                        s[j] = sm.load(row, 4)
                    else:
                        s[j] = [sm.load(row + 4 * i, 1)[0] if m0 + i < channels else 0 for i in range(4)]
                n, q = r0 // plane, r0 % plane
                for i in range(4):
                    m = m0 + i
                    if m >= channels:
                        continue
                    if q + 4 <= plane:  # store_run
                        e0 = (n * channels + m) * plane + q
                        zb = [0] * 4
                        if zm:
                            za = z_base + e0
                            zb = zm.load(za, 4) if za % 4 == 0 else [zm.load(za + j, 1)[0] for j in range(4)]
                        vals = [(s[j][i], m, zb[j]) for j in range(4)]
                        ya = y_base + e0 * width
                        if ya % (4 * width) == 0:
                            ym.store(ya, vals)
                        else:
                            for j in range(4):
                                ym.store(ya + j * width, [vals[j]])
                        continue
                    nj, qj = n, q
                    for j in range(4):
                        if r0 + j < rows:
                            element((nj * channels + m) * plane + qj, s[j][i], m)
                        qj += 1
                        if qj == plane:
                            qj, nj = 0, nj + 1
    return ym.data, ym.writes


# (N, M, ld, plane)
EPILOGUE_SHAPES = [(1, 5, 8, 81), (3, 3, 4, 13), (3, 36, 36, 196), (2, 100, 100, 30), (1, 257, 260, 9),
                   (5, 64, 64, 1), (67, 8, 8, 25), (2, 20, 20, 15), (3, 9, 12, 2), (1, 7, 7, 64), (2, 16, 16, 49)]


@pytest.mark.parametrize("shape", EPILOGUE_SHAPES)
@pytest.mark.parametrize("width, residual", [(1, False), (1, True), (4, False)])
@pytest.mark.parametrize("y_off", [0, 1])
def test_epilogue_kernel_writes_every_element_once_from_its_sum(shape, width, residual, y_off):
    n, m, ld, plane = shape
    rows = n * plane
    sums = np.arange(rows * ld, dtype=np.int64) * 7 + 1
    z = np.random.default_rng(m).integers(0, 256, rows * m) if residual else None
    got, writes = run_epilogue_nchw(sums, ld, m, plane, z, 0x10000, 0x40000 + y_off * width, 0x80000 + y_off, width)
    assert (writes == 1).all(), np.unique(writes, return_counts=True)
    for r, c in itertools.product(range(rows), range(m)):
        e = (r // plane * m + c) * plane + r % plane
        assert got[e] == (sums[r * ld + c], c, z[e] if residual else 0), (r, c)
