/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The subcommands of the modelplane executable; each returns a process exit status. */

int cmd_version(int argc, char **argv);
int cmd_controller(int argc, char **argv);
int cmd_webhook(int argc, char **argv);
int cmd_registry(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_ui(int argc, char **argv);
int cmd_storage_initializer(int argc, char **argv);
int cmd_async_upload(int argc, char **argv);
