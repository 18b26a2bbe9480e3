/* The contract between the hooks' entry points (passthru.S) and the runtime's routes (preload.c).
 *
 * dlopen(file, mode) enters passthru.S, which asks route_dlopen_glance(file) and, unless that
 * turns the call away (a ROUTE_PASS), calls route_dlopen(file, mode, caller, &handle) with the
 * caller's return address; dlmopen likewise, without the glance. The route classifies the call:
 *   ROUTE_PASS     the stub jumps into the real function with the caller's own arguments and
 *                  return address, as if the runtime were not there (the loader sees the real
 *                  caller: its RPATH and RUNPATH, its $ORIGIN, its namespace);
 *   ROUTE_HANDLED  the runtime made the call; the stub returns *handle.
 * On every return errno is what the caller had when it called (a handled call succeeded, and the
 * loader keeps errno on success). A handled load that names another file than the caller's (a
 * candidate the runtime found) is made by the runtime rather than passed on: the stub jumps after
 * the route has returned, so the route could hand it no storage for the path, and for a path with
 * no '$' the loader does no search, so the caller's frame has nothing to add. */
#pragma once

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>

enum route_action {
	ROUTE_PASS = 0,
	ROUTE_HANDLED = 1,
};

/* The first look at a dlopen, which the stub asks alone before route_dlopen: false passes the call
   on at once. Every dlopen in the process pays it, so it is a few instructions. */
bool route_dlopen_glance(const char *file);
enum route_action route_dlopen(const char *file, int mode, const void *caller, void **handle);
enum route_action route_dlmopen(Lmid_t namespace, const char *file, int mode, const void *caller, void **handle);
