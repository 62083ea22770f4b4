#!/bin/sh
ls data/*.text | wc -l
