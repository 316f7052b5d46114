// Command bench measures the project on the test world and prints a table
// and writes JSON (`make bench`); it asserts nothing about speed.
package main
