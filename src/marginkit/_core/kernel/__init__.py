"""The blocked exact engine of the kernel algorithms (kernel ALMA_2, Gentile 2001, Remark 5).

The hypothesis of every one-vs-rest problem c is ``w_c = s_c sum_j A[j, c] phi_hat(x_j)``
over one support-vector store shared by all problems, ``phi_hat(x) = phi(x) / ||phi(x)||``
(so ``phi_hat(x) . phi_hat(y) = K(x, y) / sqrt(K(x, x) K(y, y))``). A correction of
problem c on x appends ``A = eta y / s_c`` and divides ``s_c`` by
``N = max(1, ||w'||)``, with ``||w'||^2 = ||w||^2 + 2 eta y w . x_hat + eta^2``: no
coefficient ever changes afterwards, which is what makes the blocking exact.

For a block of b incoming examples against m support vectors:

1. one GEMM gives the normalised kernel rows K_hat(block, SV) (b x m),
2. one more gives the margins of every problem at once (b x m times m x C),
3. one small GEMM gives the in-block Gram (b x b), and a compiled walk goes through
   the block in order, adding the contribution of every correction made inside the
   block to the examples after it.

The walk makes exactly the decisions of the per-example algorithm; only the order of
floating-point sums differs. Across epochs of one ``fit``, the margin sum of each
example over the support vectors it has already seen is kept (n x C numbers, within
``cache_size``), so a later epoch computes only the kernel columns of support vectors
that are new to that example.

Outputs, with no copy of any hypothesis:

- last: ``s_c sum_j A[j, c] K_hat(x_j, x)``;
- avg (sum_k c_k w_k, Freund and Schapire 1999): a running total ``T_c`` of ``s_c``
  over trials; the averaged coefficient of support vector j is
  ``A[j, c] (T_c - T_c at j's insertion)``;
- voted (sum_k c_k sign(w_k . x)): prefix sums of ``A[j, c] K_hat(x_j, x)`` along the
  insertion order give every ``w_k . x`` up to its positive scale.

Every j above is an entry: one correction of one example (all problems corrected on
that trial). The rows of the store are the examples (:class:`RowStore`): an example
corrected again in a later epoch adds an entry, a few numbers per problem, on the row
it has. The walk and the margin products read the entries (a block's products gather
the rows of the entries they need), so the decisions are those of the per-example
algorithm; the last and averaged outputs sum each row's entries into one coefficient,
and the vote takes each entry's kernel column from its row: memory and the kernel
rows of a prediction grow with the distinct examples, not with the corrections.

The modules, one job each: :mod:`.walk` (the compiled walk through a block, and the
forgetting of a hypothesis), :mod:`.rows` (the stores of rows and their norms, the rows
of a call), :mod:`.state` (the support vectors' coefficients and averaging bookkeeping),
:mod:`.outputs` (the coefficients on the products' backend, the outputs and the vote),
:mod:`.blocks` (each block's margin products, made ahead, and the loop over the blocks).
"""

# what a model file or a pickle of an earlier release names here
from .rows import RowStore  # noqa: F401
from .state import KernelState  # noqa: F401
