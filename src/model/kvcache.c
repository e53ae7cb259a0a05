#include "model/kvcache.h"

#include <string.h>


int lp_kv_type_parse(const char *s, enum lp_qtype *t)
{
	if (!strcmp(s, "f32"))
		*t = LP_Q_F32;
	else if (!strcmp(s, "f16"))
		*t = LP_Q_F16;
	else if (!strcmp(s, "q8_0"))
		*t = LP_Q_Q8_0;
	else
		return 0;
	return 1;
}

size_t lp_kvcache_bytes_per_token(uint32_t n_layer, uint32_t kv_dim, uint32_t head_dim,
				  enum lp_qtype type)
{
	if (type != LP_Q_F32 && type != LP_Q_F16 && type != LP_Q_Q8_0)
		return 0;
	if (head_dim % lp_qtype_block_elems(type))
		return 0;
	return 2 * (size_t)n_layer * lp_qtype_row_bytes(type, kv_dim);
}
