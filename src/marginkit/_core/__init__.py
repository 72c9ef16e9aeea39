"""The compiled engines under the estimators: what the public modules are thin over.

- :mod:`.linear`: the p-norm passes of ALMA_p, the Perceptron family, ROMMA and the
  margin Perceptron (numba), with their correction log;
- :mod:`.votes`: the voted output, replayed from that log;
- :mod:`.state`: the state those passes carry between calls (``PNormState``);
- :mod:`.pumma`: PUMMA_p's pass, on the same state;
- :mod:`.kernels`: kernel functions, one product and one elementwise pass a block;
- :mod:`.arrays`: where a block's products are made (the host, or an array API
  device);
- :mod:`.kernel`: the blocked exact engine of the kernel algorithms, a module per job:
  the compiled walk (:mod:`.kernel.walk`), the stores of rows (:mod:`.kernel.rows`), the
  state of the support vectors (:mod:`.kernel.state`), its outputs and vote
  (:mod:`.kernel.outputs`), the block driver (:mod:`.kernel.blocks`);
- :mod:`.budget`: the support-vector budget's maintenance steps;
- :mod:`.shards`: the kernel store's rows sharded over a cluster's workers;
- :mod:`.pairs`: kernel PUMMA_2 on that engine, its store holding pairs.

Nothing here imports marginkit's modules above it (only numpy, scipy, numba,
array-api-compat, scikit-learn's array API helpers and threadpoolctl): the estimators
import from here, and the persistence side declares the classes that files may hold
and checks them as loaded (:mod:`marginkit._state_checks`).
"""

#: The options of every compiled function of the package (numba's ``njit``): compiled
#: once and cached on disk, run without the GIL (threads run them side by side), and no
#: fast-math, whose reordered sums would change results from one CPU to another
NUMBA_OPTS = {"cache": True, "nogil": True, "fastmath": False}
#: The same, for a small function compiled into its callers
NUMBA_INLINE = {**NUMBA_OPTS, "inline": "always"}
