/* TEMPORARY stub */
#include "mountinfo.h"
int access_resolve(const struct config *cfg, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen)
{
	(void)mountinfo_path;
	(void)err;
	(void)errlen;
	out->hidepid = cfg->hidepid == HIDEPID_AUTO ? HIDEPID_OFF :
						      cfg->hidepid;
	out->gid = cfg->access_gid_set ? cfg->access_gid : CONFIG_GID_NONE;
	return 0;
}
