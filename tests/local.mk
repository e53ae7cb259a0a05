# tests shared by several modules (CLI shell tests, fuzz targets)
