/* stack_set -- keys of a loaded stack overridden by the user (--stack-set KEY=VALUE, repeatable; a table's
 * stack_set cell, "KEY=VALUE;KEY=VALUE"): a what-if on the software stack, as --ib-gbps is one on the hardware
 * profile, instead of an edited copy of the stack's file. Each setting is checked against the stack's key table
 * (platforms/stack.c: a numeric key, inside its range, an integer where the key counts, a precision where it is
 * one), with the same limits a stack file has, and the outputs record which keys were set
 * (stack_settings_describe): a result says what it was computed with.
 *
 * Owns: stack_setting, parsing, applying and describing them. May not touch: the stack file, its keys' meaning.
 */
#ifndef STACK_SET_H
#define STACK_SET_H

#include <glib.h>

#include "stack.h"

typedef struct stack_setting {
  size_t key;   /* index in stack_key_table */
  double value; /* inside the key's range */
} stack_setting;

/* Append the setting "KEY=VALUE" to `settings` (a GArray of stack_setting); FALSE with err, one line starting with
 * `field` ("--stack-set", "stack_set") that names the key, the bad value and what is allowed, on an unknown key,
 * a value outside the key's range, or a key already set in `settings`. */
gboolean stack_setting_parse(GArray *settings, const char *text, const char *field, GError **err);
/* The same for a list "KEY=VALUE;KEY=VALUE" (a table cell; empty: none). */
gboolean stack_settings_parse_list(GArray *settings, const char *text, const char *field, GError **err);
/* Set each key of `settings` (NULL: none) on s, in order, recording them in s->set (the outputs' provenance). */
void stack_settings_apply(const GArray *settings, stack_profile *s);
/* "tp_comm_overlap=0;grad_reduce_bytes=4" in the order given, values as lsim_number writes them (empty: none), as
 * stack_settings_parse_list reads it back. Caller frees. */
char *stack_settings_describe(const GArray *settings);

#endif
