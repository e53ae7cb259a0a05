/*
 * check_decode.cu - the GPU decoders checked on the host, no GPU needed.
 *
 * kernels/quant.cu decodes every weight type through deq8<T>, which is
 * compiled for the host too. This program quantizes random rows with the
 * CPU reference (lp_quantize_row), decodes them with lp_dequantize_row and
 * with deq8<T>, 8 elements at a time, and requires the same floats, bit
 * for bit: the host compiler does not fuse multiply-adds, so any
 * difference is a layout error, not rounding. On the device, fused
 * multiply-adds may move the last bit; the per-op tests cover that.
 *
 * Build and run (tests/gpu/run.sh does):
 *   nvcc -std=c++17 -I. -Isrc tests/gpu/check_decode.cu src/quant/quant.c -o check_decode
 * Exit 0 when every type matches, 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/quant.cu"

extern "C" {
#include "quant/quant.h"
}

static float frand(unsigned *s)
{
	*s = *s * 1664525u + 1013904223u;
	return ((float)(*s >> 8) / 16777216.0f) * 2.0f - 1.0f;
}

template <int T> static int check(enum lp_qtype t, int n_cols, unsigned seed)
{
	size_t rb = lp_qtype_row_bytes(t, (uint64_t)n_cols);
	float *x = (float *)malloc(n_cols * sizeof(float)), *ref = (float *)malloc(n_cols * sizeof(float));
	/* uint32_t storage: 4-byte aligned like a device allocation */
	uint32_t *q = (uint32_t *)calloc(rb / 4 + 1, 4);
	int bad = 0;

	for (int i = 0; i < n_cols; i++)
		x[i] = frand(&seed) * (i % 7 == 0 ? 4.0f : 1.0f);
	lp_quantize_row(t, x, q, (size_t)n_cols);
	lp_dequantize_row(t, q, ref, (size_t)n_cols);
	for (int g = 0; g < n_cols / 8; g++) {
		float v[8];
		if constexpr (is_float_t<T>())
			for (int i = 0; i < 8; i++)
				v[i] = ldf<T>((const uint8_t *)q, 8 * g + i);
		else
			deq8<T>((const uint8_t *)q, g, v);
		for (int i = 0; i < 8; i++)
			if (memcmp(&v[i], &ref[8 * g + i], 4)) {
				if (bad < 5)
					fprintf(stderr, "%s: element %d: gpu decoder %.9g, reference %.9g\n",
						lp_qtype_name(t), 8 * g + i, v[i], ref[8 * g + i]);
				bad++;
			}
	}
	printf("%-5s %5d columns: %s\n", lp_qtype_name(t), n_cols, bad ? "MISMATCH" : "ok");
	free(x);
	free(ref);
	free(q);
	return bad != 0;
}

int main(void)
{
	int fails = 0;

	for (int k = 1; k <= 3; k++) {
		int nl = 32 * (k * 7), nk = 256 * k;
		fails += check<LPK_Q4_0>(LP_Q_Q4_0, nl, 1u + k);
		fails += check<LPK_Q4_1>(LP_Q_Q4_1, nl, 2u + k);
		fails += check<LPK_Q5_0>(LP_Q_Q5_0, nl, 3u + k);
		fails += check<LPK_Q5_1>(LP_Q_Q5_1, nl, 4u + k);
		fails += check<LPK_Q8_0>(LP_Q_Q8_0, nl, 5u + k);
		fails += check<LPK_Q4_K>(LP_Q_Q4_K, nk, 6u + k);
		fails += check<LPK_Q5_K>(LP_Q_Q5_K, nk, 7u + k);
		fails += check<LPK_Q6_K>(LP_Q_Q6_K, nk, 8u + k);
		fails += check<LPK_F16>(LP_Q_F16, nl + 8, 9u + k);
		fails += check<LPK_BF16>(LP_Q_BF16, nl + 8, 10u + k);
		fails += check<LPK_F32>(LP_Q_F32, nl + 8, 11u + k);
	}
	printf("%s\n", fails ? "decoders: FAILED" : "decoders: all match the CPU reference");
	return fails != 0;
}
