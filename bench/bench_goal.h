/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_goal.h — one way for every benchmark to print a figure beside its goal and
 * mark a miss, so `make bench` can list the misses at the end (lines starting
 * "goal:"). A benchmark never fails on speed: a miss is printed, not an exit code. */
#ifndef BLACKOUT_BENCH_GOAL_H
#define BLACKOUT_BENCH_GOAL_H

#include <stdbool.h>
#include <stdio.h>

/* Prints "goal: WHAT VALUE UNIT (goal >= GOAL UNIT) met|MISSED" for at_least, or
 * with "<=" otherwise; returns whether the goal was met. */
static inline bool bench_goal(const char *what, double value, bool at_least, double goal,
                              const char *unit)
{
	bool met = at_least ? value >= goal : value <= goal;
	int dv = value < 100 ? 2 : 0, dg = goal < 100 ? 2 : 0; /* ratios: 0.57x; rates: 2900/s */
	printf("goal: %-52s %10.*f%s (goal %s %.*f%s)  %s\n", what, dv, value, unit,
	       at_least ? ">=" : "<=", dg, goal, unit, met ? "met" : "MISSED");
	return met;
}

#endif
