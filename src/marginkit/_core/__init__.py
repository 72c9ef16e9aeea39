"""The compiled engines under the estimators: what the public modules are thin over.

- :mod:`.linear`: the p-norm passes of ALMA_p, the Perceptron family, ROMMA and the
  margin Perceptron (numba), with their correction log and vote;
- :mod:`.state`: the state those passes carry between calls (``PNormState``);
- :mod:`.pumma`: PUMMA_p's pass, on the same state;
- :mod:`.kernels`: kernel functions, one product and one elementwise pass a block;
- :mod:`.arrays`: where a block's products are made (the host, or an array API
  device);
- :mod:`.kernel`: the blocked exact engine of the kernel algorithms (support-vector
  store, coefficients, walk, outputs);
- :mod:`.pairs`: kernel PUMMA_2 on that engine, its store holding pairs.

Nothing here imports an estimator; the estimators import from here only.
"""
