// The system's SQLite, for the decision store (Sources/LNPStore).
#include <sqlite3.h>
