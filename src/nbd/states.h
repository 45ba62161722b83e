/* SPDX-License-Identifier: GPL-2.0-or-later */
/* states.h — the plugin's second mode, `states=DIR`: a state store served as exports
 * s<N> (docs/realkernel.md section 2). No nbdkit types here; plugin.c routes to it. */
#ifndef BLACKOUT_NBD_STATES_H
#define BLACKOUT_NBD_STATES_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/err.h"

struct nbd_states;      /* the store: DIR, its base.img */
struct nbd_states_conn; /* one connection: its state's delta and a private overlay */

int nbd_states_open(const char *dir, struct nbd_states **out, struct bo_err *err);
void nbd_states_close(struct nbd_states *st);
/* A connection to export `name` (s<N>); the error names the file and what is wrong. */
int nbd_states_connect(struct nbd_states *st, const char *name, struct nbd_states_conn **out,
                       struct bo_err *err);
void nbd_states_disconnect(struct nbd_states_conn *c);
uint64_t nbd_states_size(const struct nbd_states_conn *c);
int nbd_states_pread(struct nbd_states_conn *c, void *buf, uint32_t count, uint64_t off,
                     struct bo_err *err);
int nbd_states_pwrite(struct nbd_states_conn *c, const void *buf, uint32_t count, uint64_t off,
                      struct bo_err *err);
/* trim and write-zeroes: zeros in the overlay */
int nbd_states_zero(struct nbd_states_conn *c, uint32_t count, uint64_t off, struct bo_err *err);

#endif
