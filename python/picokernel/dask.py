"""Kernels over Dask arrays, on one machine or a dask.distributed cluster.

Calling a kernel with Dask arrays, ``k(x, y, o)``, or
``picokernel.dask.apply(k, x, y, o)``, runs nothing: it returns the Dask
arrays of what the kernel stores (one array, or a tuple in parameter order
when it stores several), whose graph runs the compiled kernel on blocks.
Arguments are never written: the arrays given for the refs the kernel
stores are their initial contents (read where the kernel reads them, as
``o[1:-1] = ...`` leaves the ends of ``o``; ``da.empty_like(x)`` where it
does not). NumPy arrays and numbers are accepted beside Dask arrays.

The graph comes from the traced kernel (Dialect/Pk/Analysis/Accesses.h):
which dimensions of the stored arrays each read follows, at which offsets,
and which dimensions it reduces or contracts.

- Dimensions read elementwise (with broadcasting) keep their chunks, which
  the arrays sharing a dimension align on (rechunked only where they
  differ): ``da.blockwise``.
- Dimensions read at offsets (a stencil's ``x[2:] - 2 * x[1:-1] + x[:-2]``)
  exchange halos as deep as the largest offset with their neighbouring
  blocks, computed over and trimmed as ``da.map_overlap`` does (with no
  padding past the array's ends, so the result is NumPy's).
- A sum, max, min or mean over dimensions that span chunks, when it is the
  last thing the kernel computes, runs per block and combines the blocks'
  partial results in a tree (``da.reduction``) with kernels compiled by
  picokernel.
- Every other dimension (one a softmax or layernorm reduces inside the
  kernel, a matmul's contracted one, one read with a stride, from a
  constant index or in a pattern not known) is rechunked into one chunk, so
  each block sees all of it. So is every dimension of a kernel whose code
  reads sizes (``x.shape``), with a PerformanceWarning.

Blocks run where Dask runs them: threads, processes or a dask.distributed
cluster. A kernel pickles by reference to its function, and each worker
process compiles it once per block shape (the disk cache serves the
workers of one machine); compiled code runs with the GIL released.
"""

import functools
import itertools
import math
import operator
import warnings

import numpy as np

try:
    import dask.array as da
    from dask.array.core import PerformanceWarning
    from dask.highlevelgraph import HighLevelGraph
except ImportError as error:  # pragma: no cover - without the extra
    raise ImportError(
        "picokernel.dask needs Dask: pip install 'picokernel[dask]'") from error

import picokernel
from picokernel import _picokernel

__all__ = ["apply"]


def apply(kernel, *args, **named):
    """The Dask arrays that kernel `kernel` stores, run on the arrays
    `args` (Dask arrays, NumPy arrays or numbers; by position or by
    parameter name): one array, or a tuple in parameter order when it
    stores several. Nothing runs until they are computed."""
    if not isinstance(kernel, picokernel.Kernel):
        raise TypeError("picokernel.dask.apply expects a picokernel kernel, got "
                        f"{type(kernel).__name__}")
    return _apply(kernel, kernel._bound(args, named))


def _apply(kernel, args):
    """apply() of arguments in parameter order (warnings name the caller of
    the caller of this function: the user's line)."""
    arrays = [_as_dask(arg, name) for arg, name in zip(args, kernel._param_names)]
    return _Graph(kernel, arrays).outputs()


def _as_dask(arg, name):
    if isinstance(arg, da.Array):
        if any(math.isnan(size) for size in arg.shape):
            raise ValueError(
                f"argument '{name}' has unknown chunk sizes (a Dask array of "
                "a shape NaN); call its compute_chunk_sizes() first")
        return arg
    if hasattr(arg, "__dask_graph__"):
        raise TypeError(f"argument '{name}' is a Dask {type(arg).__name__}; "
                        "picokernel.dask takes Dask arrays")
    array = arg if isinstance(arg, np.ndarray) else _picokernel._as_array(arg, name)
    return da.from_array(array, chunks=array.shape)


class _Dimensions:
    """The dimensions of the kernel's arrays (and of its reductions), in
    classes of dimensions that run over one index: each class becomes one
    index of the blockwise graph."""

    def __init__(self):
        self.parent = {}
        self.offsets = []  # (slot, offset from the stored index)
        self.single = set()  # slots whose class must be one chunk

    def find(self, slot):
        self.parent.setdefault(slot, slot)
        while self.parent[slot] != slot:
            self.parent[slot] = self.parent[self.parent[slot]]
            slot = self.parent[slot]
        return slot

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)

    def classes(self):
        members = {}
        for slot in list(self.parent):
            members.setdefault(self.find(slot), []).append(slot)
        return members


class _Graph:
    """The Dask graph of one kernel call."""

    def __init__(self, kernel, arrays):
        self.kernel = kernel
        self.arrays = arrays
        self.partial_dtype = None
        mlir, reads_sizes = self._trace([a.shape for a in arrays])
        self.stores = _picokernel._accesses(mlir)
        self.outputs_refs = sorted(store["ref"] for store in self.stores)
        self.read_refs = {ref for store in self.stores for ref, _ in store["reads"]}
        self._partial_sums_in_float64()
        if reads_sizes:
            warnings.warn(
                f"kernel {kernel.name!r} reads sizes (x.shape, len(x)): "
                "picokernel.dask runs it on each array as one block",
                PerformanceWarning, stacklevel=4)
        self._classify(everything_single=reads_sizes)
        problem = self._blocks_trace_alike()
        if problem:
            warnings.warn(
                f"kernel {kernel.name!r} does not trace on blocks as on the "
                f"whole arrays ({problem}): picokernel.dask runs it on each "
                "array as one block", PerformanceWarning, stacklevel=4)
            self._classify(everything_single=True)

    def _trace(self, shapes):
        """The kernel's pk module traced for arrays of `shapes` (the
        stored one of the final sum in float64, see below), and whether
        its code read sizes."""
        dtypes = [a.dtype for a in self.arrays]
        if self.partial_dtype is not None:
            dtypes[self.outputs_refs[0]] = self.partial_dtype
        _, mlir, reads_sizes = _picokernel._trace_function(
            self.kernel.__wrapped__, self.kernel.name, self.kernel._param_names,
            shapes, dtypes)
        return mlir, reads_sizes

    def _partial_sums_in_float64(self):
        """A sum (or mean) stored into a narrower float than float64 is
        rounded into it: done to each block's part, that may overflow where
        the whole does not, so the analysis refuses to combine blocks. The
        kernel stores the parts in float64 instead, rounded once combined,
        where traced so its sum is still the final, combinable step."""
        self.given_stores = self.stores
        if len(self.stores) != 1 or self.stores[0]["combine"] is not None:
            return
        if self.outputs_refs[0] in self.read_refs:
            return  # its contents are read in its own type
        dtype = self.arrays[self.outputs_refs[0]].dtype
        if not (dtype.kind == "f" or dtype.name == "bfloat16") or dtype.itemsize >= 8:
            return
        self.partial_dtype = np.dtype(np.float64)
        try:
            stores = _picokernel._accesses(
                self._trace([a.shape for a in self.arrays])[0])
        except Exception:  # noqa: BLE001 - keep the kernel's own dtypes
            stores = None
        if stores and stores[0]["combine"] in ("sum", "mean"):
            self.stores = stores
        else:
            self.partial_dtype = None

    # -- Which dimensions run over one index ---------------------------------

    def _classify(self, everything_single):
        dims = _Dimensions()
        self.dims = dims
        for ref, array in enumerate(self.arrays):
            for d in range(array.ndim):
                dims.find(("ref", ref, d))
        for s, store in enumerate(self.stores):
            # A slice store writes a part of the range of an index: its
            # bounds must fall in the same place within each block, as
            # deep inside its halos as they are from the array's ends.
            for kind, var, before, after in store["parts"]:
                slot = ("ref", store["ref"], var) if kind in ("stored", "unknown") \
                    else ("reduced", s, var)
                if var < 0:
                    everything_single = True
                elif kind == "stored" and before >= 0:
                    dims.offsets.append((slot, max(before, after)))
                else:
                    dims.single.add(slot)
            for ref, terms in store["reads"]:
                for d, (kind, var, stride, offset) in enumerate(terms):
                    slot = ("ref", ref, d)
                    if kind == "stored" and stride == 1:
                        dims.union(slot, ("ref", store["ref"], var))
                        dims.offsets.append((slot, offset))
                    elif kind == "reduced" and stride == 1 and offset == 0:
                        dims.union(slot, ("reduced", s, var))
                    elif kind == "unknown" and var < 0:
                        everything_single = True
                    else:
                        dims.single.add(slot)
                        if kind in ("stored", "unknown"):
                            dims.single.add(("ref", store["ref"], var))
        self.combined = self._combined_reductions()
        classes = dims.classes()
        self.letter = {root: f"i{n}" for n, root in enumerate(classes)}
        self.depth = {root: 0 for root in classes}
        for slot, offset in dims.offsets:
            root = dims.find(slot)
            self.depth[root] = max(self.depth[root], abs(offset))
        self.chunks = {}
        for root, members in classes.items():
            single = everything_single or self._must_be_one_chunk(root, members)
            self.chunks[root] = None if single else self._common_chunks(members)
            if self.chunks[root] is None:
                self.depth[root] = 0
            elif self.depth[root]:
                # Halos come from the neighbouring blocks only.
                # (Twice as deep: a block at an end, with one halo, then
                # still holds more than its slices leave out.)
                self.chunks[root] = _at_least(self.chunks[root],
                                              2 * self.depth[root])
        self.combined = [root for root in self.combined
                         if self.chunks[root] is not None and len(self.chunks[root]) > 1]
        if not self.combined:  # the kernel as it is
            self.partial_dtype = None
            self.stores = self.given_stores

    def _blocks_trace_alike(self, most=48):
        """Why the kernel, traced for the shapes its blocks have, reads
        otherwise than traced for the whole arrays; None where it reads
        alike. Code that runs but stores nothing (a slice too long for a
        block) may raise, and the trace checks sizes the analysis does not
        see. Up to `most` combinations of blocks' shapes are tried."""
        used = {self.dims.find(("ref", ref, d)) for ref in self._used()
                for d in range(self.arrays[ref].ndim)}
        extents = {}
        for root, chunks in self.chunks.items():
            if root in used and chunks is not None and len(chunks) > 1:
                sizes = _with_halos(chunks, self.depth[root])
                extents[root] = sorted(set(sizes), key=sizes.index)
        if not extents:
            return None
        roots = list(extents)
        choices = [extents[r] for r in roots]
        if math.prod(map(len, choices)) <= most:
            combinations = list(itertools.product(*choices))
        else:
            # Each size of each dimension at least once, then at random.
            longest = max(map(len, choices))
            combinations = [tuple(c[i % len(c)] for c in choices)
                            for i in range(longest)]
            rng = np.random.default_rng(0)
            while len(combinations) < most:
                combinations.append(tuple(c[rng.integers(len(c))] for c in choices))
        expected = _normalized(self.stores)
        for combination in combinations:
            size = dict(zip(roots, combination))
            shapes = []
            for ref, array in enumerate(self.arrays):
                if ref not in self._used():
                    shapes.append(array.shape)  # as _run_block makes it
                    continue
                roots_of = [self.dims.find(("ref", ref, d)) for d in range(array.ndim)]
                shapes.append(tuple(size.get(root, n)
                                    for root, n in zip(roots_of, array.shape)))
            try:
                mlir, reads_sizes = self._trace(shapes)
                stores = _picokernel._accesses(mlir)
            except Exception as error:  # noqa: BLE001 - reported
                return f"for shapes {shapes}: {type(error).__name__}: {error}"
            if reads_sizes:  # it went on after an error of its trace
                return f"for shapes {shapes} its code caught an error"
            if _normalized(stores) != expected:
                return f"for shapes {shapes} it reads otherwise"
        return None

    def _used(self):
        """The arguments the stored arrays depend on: the others are
        given to the kernel whole, and not through the graph."""
        return self.read_refs | set(self.outputs_refs)

    def _combined_reductions(self):
        """The classes of the reductions whose blocks' partial results
        combine (see StoreAccesses::combine): only where the kernel stores
        one array."""
        if len(self.stores) != 1 or self.stores[0]["combine"] is None:
            return []
        return [self.dims.find(("reduced", 0, var))
                for var in self.stores[0]["combined"]]

    def _size(self, slot):
        if slot[0] == "ref":
            return self.arrays[slot[1]].shape[slot[2]]
        sizes = {r[0]: r[2] for r in self.stores[slot[1]]["reductions"]}
        return sizes[slot[2]]

    def _must_be_one_chunk(self, root, members):
        if any(slot in self.dims.single for slot in members):
            return True
        if len({self._size(slot) for slot in members}) > 1:
            return True
        refs = [slot[1] for slot in members if slot[0] == "ref"]
        if len(refs) != len(set(refs)):
            return True  # two dimensions of one array
        reduced = [slot for slot in members if slot[0] == "reduced"]
        combined = {("reduced", 0, var) for var in self.stores[0]["combined"]} \
            if self.combined else set()
        # Blocks combine only partial results of the final reduction: any
        # other reduction along the dimension needs all of it.
        if reduced and (any(slot not in combined for slot in reduced)
                        or self.depth[root]):
            return True
        if reduced and any(slot[0] == "ref" and slot[1] in self.outputs_refs
                           for slot in members):
            return True
        return self.depth[root] >= self._size(members[0])

    def _common_chunks(self, members):
        """The chunks of the arrays read along this class's dimension,
        refined so that every array's boundaries are boundaries."""
        read = [self.arrays[ref].chunks[d] for kind, ref, d in
                (slot for slot in members if slot[0] == "ref")
                if ref in self.read_refs]
        if not read:
            given = [self.arrays[slot[1]].chunks[slot[2]]
                     for slot in members if slot[0] == "ref"]
            read = given[:1]
        if not read:
            return None
        boundaries = sorted({int(b) for chunks in read
                             for b in np.cumsum((0,) + tuple(chunks))})
        return tuple(np.diff(boundaries).tolist()) or read[0]

    # -- The graph -----------------------------------------------------------

    def _index(self, ref):
        """Argument `ref`'s blockwise index: its dimensions' classes' where
        they are in several chunks, else one of its own (a class in one
        chunk needs no aligning, and may hold two of its dimensions)."""
        index = []
        for d in range(self.arrays[ref].ndim):
            root = self.dims.find(("ref", ref, d))
            split = self.chunks[root] is not None and len(self.chunks[root]) > 1
            index.append(self.letter[root] if split else f"a{ref}d{d}")
        return tuple(index)

    def _prepared(self, ref):
        """Argument `ref` chunked as its classes are, with its halos."""
        array = self.arrays[ref]
        chunks = self._target_chunks(ref)
        depth = self._depths(ref)
        if ref in self.outputs_refs and ref not in self.read_refs:
            # Its contents are not read: only its blocks' shapes matter.
            chunks = tuple(_with_halos(c, depth[d]) for d, c in enumerate(chunks))
            return da.empty(tuple(map(sum, chunks)), chunks=chunks,
                            dtype=self.partial_dtype or array.dtype)
        array = array.rechunk(chunks)
        if any(depth.values()):
            array = da.overlap.overlap(array, depth=depth,
                                       boundary={d: "none" for d in depth})
        return array

    def _target_chunks(self, ref):
        array = self.arrays[ref]
        roots = [self.dims.find(("ref", ref, d)) for d in range(array.ndim)]
        return tuple(self.chunks[root] or (size,) if size else (0,)
                     for root, size in zip(roots, array.shape))

    def _depths(self, ref):
        return {d: self.depth[self.dims.find(("ref", ref, d))]
                for d in range(self.arrays[ref].ndim)}

    def outputs(self):
        used = self._used()
        out_index = []
        for ref in self.outputs_refs:
            out_index += [i for i in self._index(ref) if i not in out_index]
        combined = [self.letter[root] for root in self.combined]
        out_index += [i for i in combined if i not in out_index]
        roles, args = [], []
        for ref, array in enumerate(self.arrays):
            if ref not in used:
                # The kernel's code still runs on it: its whole shape, its
                # pages never touched.
                roles.append(("unused", array.shape, array.dtype))
                continue
            role = ("input",)
            if ref in self.outputs_refs:
                role = ("initial",) if ref in self.read_refs else ("new",)
            roles.append(role)
            args += [self._prepared(ref), self._index(ref)]
        weights = self._mean_weights(combined)
        block = functools.partial(_run_block, self.kernel, tuple(roles),
                                  tuple(self.outputs_refs), len(combined), weights)
        # One stored array: the blocks are its blocks (a layer Dask can
        # fuse with the next); several: tuples, taken apart in _output.
        single = len(self.outputs_refs) == 1
        dtype = (self.partial_dtype or self.arrays[self.outputs_refs[0]].dtype
                 if single else np.float64)
        blocks = da.blockwise(block, tuple(out_index), *args, concatenate=True,
                              align_arrays=False, token=f"picokernel-{self.kernel.name}",
                              meta=np.empty((0,) * len(out_index), dtype=dtype))
        results = [self._output(blocks, out_index, n, ref)
                   for n, ref in enumerate(self.outputs_refs)]
        return results[0] if len(results) == 1 else tuple(results)

    def _mean_weights(self, combined):
        """For a mean over dimensions that span chunks: where in the blocks
        to find each reduced dimension's extent, and the total count."""
        if not combined or self.stores[0]["combine"] != "mean":
            return None
        where = []
        for letter in combined:
            for ref in sorted(self.read_refs):
                index = self._index(ref)
                if letter in index:
                    position = self._block_position(ref)
                    where.append((position, index.index(letter)))
                    break
        total = math.prod(sum(self.chunks[root]) for root in self.combined)
        return tuple(where), total

    def _block_position(self, ref):
        """Where argument `ref`'s block is among the blocks _run_block gets."""
        return sum(1 for r in range(ref) if r in self._used())

    def _output(self, blocks, out_index, n, ref):
        """The n-th stored array: its blocks taken from the kernel's tuples,
        trimmed of halos, its reductions' partial results combined."""
        index = self._index(ref)
        combined = [self.letter[root] for root in self.combined]
        own = list(index) + [i for i in combined if i not in index]
        position = [out_index.index(i) for i in own]
        dtype = self.arrays[ref].dtype
        if len(self.outputs_refs) == 1:
            array = blocks
        else:
            name = f"{self.kernel.name}-{ref}-{blocks.name}"
            graph = {}
            for key in _flatten(blocks.__dask_keys__()):
                block_index = key[1:]
                if any(block_index[p] for p in range(len(out_index))
                       if p not in position):
                    continue
                graph[(name,) + tuple(block_index[p] for p in position)] = (
                    operator.getitem, key, n)
            chunks = tuple(blocks.chunks[p] for p in position)
            layer = HighLevelGraph.from_collections(name, graph, dependencies=[blocks])
            array = da.Array(layer, name, chunks, dtype=dtype,
                             meta=np.empty((0,) * len(chunks), dtype=dtype))
        depth = {d: depth for d, depth in self._depths(ref).items() if depth}
        if depth:
            array = da.overlap.trim_internal(
                array, {d: depth.get(d, 0) for d in range(len(index))},
                boundary={d: "none" for d in range(len(index))})
        if combined:
            kind = self.stores[0]["combine"]
            aggregate = "sum" if kind == "mean" else kind
            axes = tuple(range(len(index), len(own)))
            partial = array.dtype
            array = da.reduction(
                array, chunk=functools.partial(_combine, kind=aggregate),
                aggregate=functools.partial(_combine, kind=aggregate),
                combine=functools.partial(_combine, kind=aggregate),
                axis=axes, keepdims=False, dtype=partial, concatenate=True,
                meta=np.empty((0,) * len(index), dtype=partial))
            if partial != dtype:
                array = array.map_blocks(functools.partial(_rounded, to=dtype),
                                         dtype=dtype, meta=np.empty(
                    (0,) * array.ndim, dtype=dtype))
        return array


def _normalized(stores):
    """The accesses of a kernel without the sizes of its reductions."""
    return [(store["ref"], store["reads"], store["parts"],
             [r[:2] for r in store["reductions"]],
             store["combine"], store["combined"]) for store in stores]


def _at_least(chunks, depth):
    """`chunks` with each one smaller than `depth` merged into a neighbour."""
    merged = []
    for chunk in chunks:
        if merged and merged[-1] < depth:
            merged[-1] += chunk
        else:
            merged.append(chunk)
    if len(merged) > 1 and merged[-1] < depth:
        last = merged.pop()
        merged[-1] += last
    return tuple(merged)


def _rounded(block, to):
    """A block of float64 partial results combined, rounded to the stored
    type as the kernel's store rounds (to infinity, without a warning)."""
    with np.errstate(over="ignore"):
        return block.astype(to)


def _with_halos(chunks, depth):
    """Chunks grown by the halos that da.overlap.overlap adds with no
    boundary: `depth` on each side that has a neighbour."""
    if depth == 0 or len(chunks) < 2:
        return chunks
    last = len(chunks) - 1
    return tuple(c + depth * ((i > 0) + (i < last)) for i, c in enumerate(chunks))


def _flatten(keys):
    if isinstance(keys, list):
        for item in keys:
            yield from _flatten(item)
    else:
        yield keys


def _run_block(kernel, roles, outputs, partial_axes, weights, *blocks):
    """Runs `kernel` on one block of each argument (roles: an input, an
    output with initial contents, a new output, an unused argument) and
    returns the blocks of its outputs: the partial results of its final
    reduction with `partial_axes` axes of size 1 appended."""
    arrays, given = [], iter(blocks)
    for role in roles:
        if role[0] == "unused":
            arrays.append(np.empty(role[1], dtype=role[2]))
            continue
        block = next(given)
        if role[0] == "initial":
            block = np.array(block, order="C", copy=True)
        elif role[0] == "new":
            block = np.empty(block.shape, dtype=block.dtype)
        arrays.append(block)
    kernel(*arrays)
    results = []
    for ref in outputs:
        result = arrays[ref]
        if weights is not None:
            where, total = weights
            count = math.prod(blocks[b].shape[d] for b, d in where)
            result = result * result.dtype.type(count / total)
        results.append(result.reshape(result.shape + (1,) * partial_axes))
    return results[0] if len(results) == 1 else tuple(results)


@functools.lru_cache(maxsize=None)
def _combiner(kind, axes, keepdims):
    """A kernel that reduces its first argument over `axes` by `kind` into
    its second."""
    def combine(partials, o):
        o[...] = getattr(partials[...], kind)(axis=axes, keepdims=keepdims)
    combine.__name__ = combine.__qualname__ = f"combine_{kind}"
    return picokernel.Kernel(combine)


def _combine(partials, axis=None, keepdims=False, kind="sum"):
    """da.reduction's step: `partials` reduced over `axis` by a kernel."""
    ndim = partials.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(
        sorted(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))))
    shape = tuple(1 if d in axes else size for d, size in enumerate(partials.shape)
                  if keepdims or d not in axes)
    out = np.empty(shape, dtype=partials.dtype)
    if partials.size == 0:
        return out
    _combiner(kind, axes, bool(keepdims))(partials, out)
    return out
