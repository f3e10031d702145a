#!/usr/bin/env python3
"""The hardware OpenGL pipeline on bunny grids past one draw's reach.

`../shared/anchors/hw_anchor.py --grid COLSxROWS` draws its grid of Forsyth-ordered bunnies with
one glDrawElements, whose index count is a 32-bit signed integer: a grid of more than 2^31
indices (about 716 M triangles) cannot be drawn that way. This script draws the same grid (the
same copies, layout, camera, shaders, clear and depth test, imported from hw_anchor.py) as
chunks of whole copies, each with its own vertex and index buffer, all inside one GL timer
query per frame. It builds the chunks one at a time, so the host holds one chunk, not the grid.

usage (on the GPU host, with the .gl folder prepared as ../shared/anchors/README.md says):
    python3 benches/gl-grid.py --anchors .gl --grid 120x120 --frames 5 --out gl-grid.json
Rows of the JSON as hw_anchor.py's "raster" rows, plus the chunking; a PNG of the last frame
with --png.
"""
import argparse
import json
import os
import struct
import sys
import time
import zlib

import numpy as np


def write_png(path, rgba):
    """Writes an RGBA8 image (rows top to bottom) as a PNG without any imaging library."""
    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anchors", default=".gl", help="folder holding hw_anchor.py and its files")
    ap.add_argument("--grid", default="120x120", help="bunny copies (cols x rows)")
    ap.add_argument("--chunk", type=int, default=1000, help="copies a draw (a buffer pair)")
    ap.add_argument("--frames", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--warmup-s", type=float, default=1.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--png", default=None)
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.anchors))
    import hw_anchor as ha  # noqa: E402 (the anchors' own meshes, camera and shaders)

    t0 = time.time()
    Vb, Fb = ha.load_obj(ha.BUNNY)
    Fb_fo, _ = ha.cached("bunny_forsyth32", lambda: ha.forsyth(Fb, len(Vb), 32))
    Fb_fo = Fb_fo.astype(np.int64)
    Nb = ha.vertex_normals(Vb, Fb_fo)
    cols, rows = (int(x) for x in args.grid.split("x"))
    ncopy = cols * rows
    # hw_anchor.py's layout: copies 5% apart in x and y, row by row
    ext = Vb.max(0) - Vb.min(0)
    step = ext * 1.05
    offs = np.array([[i * step[0], j * step[1], 0.0] for j in range(rows) for i in range(cols)],
                    np.float32)
    nv, nt = len(Vb), len(Fb_fo)
    triangles = ncopy * nt

    # hw_anchor.frame_camera on the whole grid samples 200,000 of its vertices and takes its
    # bounds: the same from a sample drawn copy by copy and the grid's two bounding corners
    rng = np.random.default_rng(0)
    pick = rng.integers(0, ncopy * nv, 200000)
    sample = Vb[pick % nv] + offs[pick // nv]
    corners = np.stack([Vb.min(0) + offs.min(0), Vb.max(0) + offs.max(0)])
    mvp, cam = ha.frame_camera(np.concatenate([sample, corners]).astype(np.float32))

    import moderngl
    ctx = moderngl.create_context(standalone=True, backend="egl", libgl="libGL.so.1",
                                  libegl="libEGL.so.1", require=430)
    info = {k: ctx.info.get(k) for k in ("GL_VENDOR", "GL_RENDERER", "GL_VERSION")}
    print("GL:", json.dumps(info), flush=True)
    ctx.enable(moderngl.DEPTH_TEST)
    ctx.disable(moderngl.CULL_FACE)
    W, H = ha.W, ha.H
    color = ctx.renderbuffer((W, H), components=4, dtype="f1")
    depth = ctx.depth_renderbuffer((W, H))
    fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
    fbo.use()
    ctx.viewport = (0, 0, W, H)
    prog = ctx.program(vertex_shader=ha.VS_PLAIN, fragment_shader=ha.FS_LAMBERT)
    prog["mvp"].write(mvp)

    # one chunk of copies at a time: interleaved positions and normals, 32-bit local indices
    local = Fb_fo.astype(np.uint32)
    draws, buffers = [], []
    for first in range(0, ncopy, args.chunk):
        k = min(args.chunk, ncopy - first)
        verts = np.empty((k, nv, 6), np.float32)
        verts[:, :, :3] = Vb[None] + offs[first:first + k, None]
        verts[:, :, 3:] = Nb[None]
        idx = local[None] + (np.arange(k, dtype=np.uint32) * np.uint32(nv))[:, None, None]
        vbo = ctx.buffer(verts)
        ibo = ctx.buffer(idx)
        del verts, idx
        vao = ctx.vertex_array(prog, [(vbo, "3f 3f", "in_pos", "in_nrm")], index_buffer=ibo,
                               index_element_size=4)
        draws.append(vao)
        buffers += [vbo, ibo]
    built = time.time() - t0
    print("grid %s: %d copies, %d triangles in %d draws, built and uploaded in %.1f s" % (
        args.grid, ncopy, triangles, len(draws), built), flush=True)

    def frame():
        fbo.clear(0, 0, 0, 0, depth=1.0)
        for vao in draws:
            vao.render(moderngl.TRIANGLES)

    w0, nw = time.perf_counter(), 0
    while nw < args.warmup or time.perf_counter() - w0 < args.warmup_s:
        frame()
        ctx.finish()
        nw += 1
    q_clear, q_draw = ctx.query(time=True), ctx.query(time=True)
    t_draw, t_clear = [], []
    for _ in range(args.frames):
        with q_clear:
            fbo.clear(0, 0, 0, 0, depth=1.0)
        with q_draw:
            for vao in draws:
                vao.render(moderngl.TRIANGLES)
        t_clear.append(q_clear.elapsed / 1e6)
        t_draw.append(q_draw.elapsed / 1e6)
    ctx.finish()
    w0 = time.perf_counter()
    for _ in range(args.frames):
        frame()
    ctx.finish()
    wall = (time.perf_counter() - w0) * 1e3 / args.frames
    img = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8).reshape(H, W, 4)
    coverage = float((img[..., 3] > 0).mean())
    if args.png:
        write_png(args.png, np.ascontiguousarray(img[::-1]))
    td, tc = np.array(t_draw), np.array(t_clear)
    row = {"grid": args.grid, "copies": ncopy, "triangles": int(triangles),
           "vertices": int(ncopy * nv), "draws": len(draws), "copies_a_draw": args.chunk,
           "draw_ms_median": float(np.median(td)), "draw_ms_min": float(td.min()),
           "draw_ms_max": float(td.max()), "clear_ms_median": float(np.median(tc)),
           "frame_ms_median": float(np.median(td + tc)), "wall_ms_per_frame_pipelined": wall,
           "pixel_coverage": coverage, "camera": cam, "warmup_frames": nw,
           "mtris_per_s": triangles / (np.median(td) * 1e-3) / 1e6, "built_s": built,
           "frames": args.frames, "info": info}
    print("RASTER %s tris=%d draws=%d draw median %.3f ms (min %.3f max %.3f) clear %.3f ms "
          "wall %.3f ms/frame coverage %.1f%%" % (
              args.grid, triangles, len(draws), row["draw_ms_median"], row["draw_ms_min"],
              row["draw_ms_max"], row["clear_ms_median"], wall, coverage * 100), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(row, f, indent=1)
    for o in draws + buffers:
        o.release()


if __name__ == "__main__":
    main()
