# Two commands: `make demo` and `make test` (each sets up whatever is missing first).
SHELL := /bin/bash
VENV := .venv
DEPS_STAMP := $(VENV)/.requirements-installed
BUILD_STAMP := install/.build-stamp
PACKAGE_FILES := $(shell find humanoid_* tf2_msgs_standin control_msgs_standin -type f \
	\( -name package.xml -o -name setup.py -o -name setup.cfg -o -name CMakeLists.txt \
	   -o -name '*.msg' -o -name '*.srv' -o -name '*.action' \
	   -o -path '*/launch/*' -o -path '*/config/*' -o -path '*/xacro/*' \
	   -o -path '*/rviz/*' -o -path '*/resource/*' -o -path '*/robots/*' \) -not -path '*/__pycache__/*')

.PHONY: setup browser demo test lint lock clean

setup: $(BUILD_STAMP) browser

# Debian's chromium for the view's browser tests (installed when missing; needs root).
browser:
	scripts/setup_browser.sh

$(DEPS_STAMP): requirements.txt scripts/setup_venv.sh scripts/fix_ros_wheel_cmake.py
	scripts/setup_venv.sh
	touch $@

$(BUILD_STAMP): $(DEPS_STAMP) $(PACKAGE_FILES) scripts/build.sh scripts/env.sh
	scripts/build.sh
	touch $@

demo: setup
	scripts/run.sh humanoid demo

test: setup
	scripts/run.sh scripts/test.sh

lint: setup
	scripts/run.sh ruff check .

# Refresh the pinned requirements.txt from requirements.in (needs network).
lock:
	rm -rf .venv-lock && python3 -m venv .venv-lock
	.venv-lock/bin/pip install --quiet -r requirements.in
	{ echo "# Fully pinned dependencies of the project virtualenv. Generated from requirements.in by"; \
	  echo "# 'make lock'; do not edit by hand."; .venv-lock/bin/python scripts/lock_requirements.py; } > requirements.txt
	rm -rf .venv-lock

clean:
	rm -rf build install log
