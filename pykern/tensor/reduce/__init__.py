"""Reductions and their relatives: sum, mean, max, arg* (`reduction`, `reduction_host`), prefix
sums (`scan`), sorting (`sort`), searching and set functions.
"""
