/* fabric -- the kind of network above the NICs, by name: `fat-tree` (every NIC
 * into one non-blocking core, or into leaf groups of --leaf-nodes nodes under
 * shared uplinks), `rail` (rail-optimized: NIC k of every node on rail leaf k;
 * traffic between two rails climbs to the spine through the leaves' uplinks) and
 * `rail-pxn` (the same switches, with cross-rail traffic first moved over NVLink
 * to the GPU on the destination's rail, as NCCL's PXN does). The profile's
 * `fabric` key, --fabric and the `fabric` column take these names; the platform
 * (cluster.cpp) builds what they name (docs/model.md, "The fabric").
 *
 * Owns: plat_fabric and its names. May not touch: SimGrid, the profile's file format.
 */
#ifndef FABRIC_H
#define FABRIC_H

#ifdef __cplusplus
extern "C" {
#endif

/* From 1: a what-if of 0 leaves the profile's (whatif.h). */
typedef enum { FABRIC_FAT_TREE = 1, FABRIC_RAIL, FABRIC_RAIL_PXN } plat_fabric;

#define FABRIC_ALLOWED "fat-tree, rail, rail-pxn"

/* "fat-tree", "rail", "rail-pxn"; "?" for any other value. */
const char *fabric_name(int f);
/* The fabric named s: 1 with *out set, 0 for any other name. */
int fabric_parse(const char *s, int *out);
/* Whether f has rail leaves (rail, rail-pxn). */
int fabric_is_rail(int f);

#ifdef __cplusplus
}
#endif

#endif
